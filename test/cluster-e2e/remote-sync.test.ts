// sluiced with remote secrets already there when it starts (PILOT_REMOTE_CLUSTER_TIMEOUT): it serves
// xDS and answers /ready only once every remote cluster has listed or the timeout has run out for it,
// as istiod. Here one secret names two clusters: "west" (the shared cluster itself, which lists) and
// "dead" (an API server that refuses connections), with a 3 s timeout.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { UNREACHABLE_KUBECONFIG } from "../support/unreachable-kubeconfig.ts";
import { type Sluiced, skipOrFail, startSluiced } from "./mesh.ts";

const { skip, missingOnCi } = skipOrFail(() => clusterSkipReason());

interface LogLine {
  time: number;
  msg: string;
}

describe("sluiced waits for the remote clusters of its start", { skip: skip ?? false }, () => {
  let cluster: Cluster;
  let system: string;
  let dir: string;
  let sluiced: Sluiced | undefined;
  let started: number;

  before(async () => {
    if (missingOnCi) throw missingOnCi;
    cluster = await sharedCluster();
    const label = `remote-sync-${Date.now().toString(36)}`;
    system = await cluster.namespace("remote-sync-system", { "sluice.test/mesh": label });
    dir = mkdtempSync(join(tmpdir(), "sluice-remote-sync-"));
    const meshConfig = join(dir, "mesh.yaml");
    writeFileSync(meshConfig, `discoverySelectors:\n- matchLabels:\n    sluice.test/mesh: ${label}\n`);
    await cluster.must("POST", `/api/v1/namespaces/${system}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "istio-remote-secret-west", labels: { "istio/multiCluster": "true" } },
      stringData: { west: cluster.kubeConfig().exportConfig(), dead: UNREACHABLE_KUBECONFIG },
    });
    started = Date.now();
    sluiced = await startSluiced(cluster.kubeconfigPath, {
      meshConfig,
      env: { POD_NAMESPACE: system, PILOT_REMOTE_CLUSTER_TIMEOUT: "3s", ENABLE_DEBUG_ENDPOINT_AUTH: "false" },
    });
  });

  after(async () => {
    await sluiced?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (system) await cluster.deleteNamespace(system, 0);
    await cluster?.stop();
  });

  test("serves only after the timeout ran out for the unreachable cluster, with the other one listed", async () => {
    assert.ok(sluiced);
    const lines = sluiced
      .tail(400)
      .split("\n")
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as LogLine];
        } catch {
          return [];
        }
      });
    const at = (msg: string) => lines.find((l) => l.msg === msg)?.time;
    const waiting = at("waiting for remote clusters to sync");
    const timedOut = at("remote cluster did not sync within PILOT_REMOTE_CLUSTER_TIMEOUT");
    const listening = at("xDS server listening");
    assert.ok(waiting && timedOut && listening, sluiced.tail());
    assert.ok(listening - waiting >= 2900, `served ${listening - waiting} ms after it began to wait`);
    assert.ok(listening >= timedOut, "served before the timeout");
    assert.ok(Date.now() - started < 60_000);
    const ready = await fetch(`http://127.0.0.1:${sluiced.httpPort}/ready`);
    assert.equal(ready.status, 200);
    const clusters = (await sluiced.debug("clusterz")) as { id: string; syncStatus: string }[];
    assert.deepEqual(
      clusters.map((c) => `${c.id}:${c.syncStatus}`),
      ["Kubernetes:synced", "dead:timeout", "west:synced"],
    );
  });
});
