// sluiced in a real cluster publishes its CA's root as istiod does (issue 29): bin/sluiced.js with
// --kubeconfig and its CA on, discoverySelectors limited to this test's namespaces (the cluster is
// shared), as pod sluiced-e2e-0 of a made-up system namespace. It takes the Lease
// istio-namespace-controller-election there, writes istio-ca-root-cert with the root of its CA
// (the one it keeps in istio-ca-secret) into each selected namespace, and releases the Lease when it stops.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { eventually, type Sluiced, startSluiced } from "./mesh.ts";

const skip = clusterSkipReason();

describe("sluiced publishes its CA's root into the cluster", { skip }, () => {
  let cluster: Cluster;
  let system: string;
  let app: string;
  let dir: string;
  let sluiced: Sluiced | undefined;
  const leasePath = () =>
    `/apis/coordination.k8s.io/v1/namespaces/${system}/leases/istio-namespace-controller-election`;
  const holder = async () => {
    const res = await cluster.request("GET", leasePath());
    return res.status === 200 ? (res.body.spec?.holderIdentity as string | undefined) : undefined;
  };

  before(async () => {
    cluster = await sharedCluster();
    const label = `root-cert-e2e-${Date.now().toString(36)}`;
    system = await cluster.namespace("sluice-system", { "sluice.test/mesh": label });
    app = await cluster.namespace("root-cert-app", { "sluice.test/mesh": label });
    dir = mkdtempSync(join(tmpdir(), "sluice-root-cert-"));
    const meshConfig = join(dir, "mesh.yaml");
    writeFileSync(meshConfig, `discoverySelectors:\n- matchLabels:\n    sluice.test/mesh: ${label}\n`);
    sluiced = await startSluiced(cluster.kubeconfigPath, {
      secureGrpcAddr: "127.0.0.1:0",
      meshConfig,
      env: { POD_NAME: "sluiced-e2e-0", POD_NAMESPACE: system },
    });
  });
  after(async () => {
    await sluiced?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("holds the namespace controller's Lease and writes its root into every selected namespace", async () => {
    await eventually("the Lease held by sluiced-e2e-0", async () => {
      const seen = await holder();
      return { ok: seen === "sluiced-e2e-0", seen: String(seen) };
    });
    const secret = await cluster.must("GET", `/api/v1/namespaces/${system}/secrets/istio-ca-secret`);
    const root = Buffer.from(secret.body.data["ca-cert.pem"], "base64").toString();
    assert.match(root, /BEGIN CERTIFICATE/);
    for (const ns of [app, system]) {
      await eventually(`istio-ca-root-cert in ${ns}`, async () => {
        const res = await cluster.request("GET", `/api/v1/namespaces/${ns}/configmaps/istio-ca-root-cert`);
        const pem = res.body?.data?.["root-cert.pem"];
        return { ok: pem === root, seen: `${res.status} ${String(pem).slice(0, 40)}` };
      });
    }
  });

  test("releases the Lease when it stops", async () => {
    await eventually("the Lease held by sluiced-e2e-0", async () => {
      const seen = await holder();
      return { ok: seen === "sluiced-e2e-0", seen: String(seen) };
    });
    await sluiced?.stop();
    sluiced = undefined;
    assert.equal(await holder(), "");
  });
});
