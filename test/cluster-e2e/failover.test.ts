// Three sluiced replicas against one cluster (issue 29): bin/sluiced.js three times with --kubeconfig
// and the CA on (one CA: the first keeps it in istio-ca-secret, the others load it), as pods
// sluiced-0..2 of a made-up system namespace, discoverySelectors limited to this test's namespaces.
// Each serves xDS; exactly one holds istio-namespace-controller-election. Killed without a chance to
// release it (SIGKILL), the leader is replaced once its Lease goes unrenewed for its duration (30 s),
// and a namespace made meanwhile gets its root certificate then. Every write of istio-ca-root-cert
// is counted from a watch: one create per namespace, no update, nothing written twice.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { ConfigObject } from "../../src/config/index.ts";
import { type KindWatch, kindClient, type NamespacedClient } from "../../src/library/kube.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { eventually, type Sluiced, startSluiced } from "./mesh.ts";

const skip = clusterSkipReason();
const LEASE = "istio-namespace-controller-election";

describe("three sluiced replicas, their leader killed", { skip }, () => {
  let cluster: Cluster;
  let system: string;
  let label: string;
  let dir: string;
  const replicas = new Map<string, Sluiced>();
  let watch: KindWatch | undefined;
  /** "<event> <namespace>" of every write of istio-ca-root-cert, in order. */
  const writes: string[] = [];

  const holder = async () => {
    const res = await cluster.request("GET", `/apis/coordination.k8s.io/v1/namespaces/${system}/leases/${LEASE}`);
    return res.status === 200 ? (res.body.spec?.holderIdentity as string | undefined) : undefined;
  };
  const published = async (ns: string) =>
    (await cluster.request("GET", `/api/v1/namespaces/${ns}/configmaps/istio-ca-root-cert`)).status === 200;

  before(async () => {
    cluster = await sharedCluster();
    label = `failover-${Date.now().toString(36)}`;
    system = await cluster.namespace("sluice-failover", { "sluice.test/mesh": label });
    watch = await (kindClient(cluster.kubeConfig(), "v1", "ConfigMap") as NamespacedClient<ConfigObject>).watch(
      undefined,
      (type, o) => {
        if (o.metadata.name === "istio-ca-root-cert") writes.push(`${type} ${o.metadata.namespace}`);
        if (o.metadata.name === "marker") writes.push(`marker ${o.metadata.namespace}`);
      },
    );
    dir = mkdtempSync(join(tmpdir(), "sluice-failover-"));
    const meshConfig = join(dir, "mesh.yaml");
    writeFileSync(meshConfig, `discoverySelectors:\n- matchLabels:\n    sluice.test/mesh: ${label}\n`);
    for (const name of ["sluiced-0", "sluiced-1", "sluiced-2"]) {
      const sluiced = await startSluiced(cluster.kubeconfigPath, {
        secureGrpcAddr: "127.0.0.1:0",
        meshConfig,
        env: { POD_NAME: name, POD_NAMESPACE: system },
      });
      replicas.set(name, sluiced);
    }
  });
  after(async () => {
    watch?.stop();
    await Promise.all([...replicas.values()].map((r) => r.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  test("one leader writes; after it is killed another takes over and nothing is written twice", async (t) => {
    await eventually("a leader", async () => {
      const seen = await holder();
      return { ok: seen !== undefined && replicas.has(seen), seen };
    });
    await eventually("the root in the system namespace", async () => ({ ok: await published(system), seen: writes }));
    const leader = (await holder()) as string;
    const before = await cluster.must("GET", `/apis/coordination.k8s.io/v1/namespaces/${system}/leases/${LEASE}`);

    // Every replica serves xDS, the leader or not.
    for (const [name, replica] of replicas) {
      const connections = (await replica.debug("connections")) as { totalClients: number };
      assert.equal(typeof connections.totalClients, "number", `${name} serves`);
    }

    const killedAt = performance.now();
    replicas.get(leader)?.child.kill("SIGKILL");
    replicas.delete(leader);
    const late = await cluster.namespace("sluice-failover-late", { "sluice.test/mesh": label });
    await eventually(
      "another replica leading and the new namespace's root written",
      async () => {
        const seen = await holder();
        return { ok: seen !== leader && replicas.has(seen ?? "") && (await published(late)), seen };
      },
      90_000,
    );
    t.diagnostic(
      `leadership moved from ${leader} to ${await holder()} in ${Math.round(performance.now() - killedAt) / 1000} s`,
    );
    const after = await cluster.must("GET", `/apis/coordination.k8s.io/v1/namespaces/${system}/leases/${LEASE}`);
    assert.equal(after.body.spec.leaseTransitions, (before.body.spec.leaseTransitions ?? 0) + 1);

    // Let the watch catch up with a write of our own, then count.
    await cluster.must("POST", `/api/v1/namespaces/${late}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "marker" },
    });
    await eventually("the watch to see the marker", async () => ({
      ok: writes.includes(`marker ${late}`),
      seen: writes,
    }));
    const ours = writes.filter((w) => !w.startsWith("marker") && (w.endsWith(` ${system}`) || w.endsWith(` ${late}`)));
    assert.deepEqual(ours, [`ADDED ${system}`, `ADDED ${late}`]);
  });
});
