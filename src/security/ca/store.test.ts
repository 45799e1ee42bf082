import assert from "node:assert/strict";
import { before, test } from "node:test";
import { CoreV1Api } from "@kubernetes/client-node";
import { type Cluster, clusterSkipReason, sharedCluster } from "../../../test/cluster/index.ts";
import { KubeCaSecretStore } from "./kube-store.ts";
import { SelfSignedCa } from "./selfsigned.ts";
import type { CaSecretData } from "./store.ts";

const skip = clusterSkipReason();

let cluster: Cluster;
before(async () => {
  if (!skip) cluster = await sharedCluster();
});

const DATA: CaSecretData = { "ca-cert.pem": "cert", "ca-key.pem": "key", "root-cert.pem": "roots" };

test("istio-ca-secret: absent, created once, read back, replaced", { skip }, async () => {
  const namespace = await cluster.namespace("store-test");
  const store = new KubeCaSecretStore(cluster.kubeConfig(), namespace);
  assert.equal(await store.load(), undefined);
  assert.equal(await store.create(DATA), true);
  assert.equal(await store.create({ ...DATA, "ca-cert.pem": "other" }), false, "a second create loses");
  assert.deepEqual(await store.load(), DATA);
  await store.update({ ...DATA, "root-cert.pem": "roots2" });
  assert.equal((await store.load())?.["root-cert.pem"], "roots2");

  const secret = await cluster
    .kubeConfig()
    .makeApiClient(CoreV1Api)
    .readNamespacedSecret({ name: "istio-ca-secret", namespace });
  assert.equal(secret.type, "istio.io/ca-root");
  assert.equal(Buffer.from(secret.data?.["ca-key.pem"] ?? "", "base64").toString(), "key");
  // Created and replaced as istiod's are: updates under its user agent's command.
  assert.deepEqual(
    secret.metadata?.managedFields?.map((f) => [f.manager, f.operation, f.subresource ?? ""]),
    [["pilot-discovery", "Update", ""]],
  );
});

test("a self-signed root in the Secret survives a restart", { skip }, async () => {
  const kubeConfig = cluster.kubeConfig();
  const namespace = await cluster.namespace("istio-system");
  const first = await SelfSignedCa.start({ store: new KubeCaSecretStore(kubeConfig, namespace), org: "cluster.local" });
  const second = await SelfSignedCa.start({
    store: new KubeCaSecretStore(kubeConfig, namespace),
    org: "cluster.local",
  });
  assert.deepEqual(second.ca.trustBundle(), first.ca.trustBundle());
  assert.equal(second.ca.bundle.certPem, first.ca.bundle.certPem);

  await first.rotate();
  assert.equal(await second.checkAndRotate(), "reloaded");
  assert.equal(second.ca.trustBundle().length, 2);
});
