import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { CoreV1Api } from "@kubernetes/client-node";
import { KubeTestServer } from "../../../test/kube-apiserver/index.ts";
import { KubeCaSecretStore } from "./kube-store.ts";
import { SelfSignedCa } from "./selfsigned.ts";
import type { CaSecretData } from "./store.ts";

let server: KubeTestServer;
before(async () => {
  server = await KubeTestServer.start();
});
after(() => server.close());

const DATA: CaSecretData = { "ca-cert.pem": "cert", "ca-key.pem": "key", "root-cert.pem": "roots" };

test("istio-ca-secret: absent, created once, read back, replaced", async () => {
  const store = new KubeCaSecretStore(server.kubeConfig(), "store-test");
  assert.equal(await store.load(), undefined);
  assert.equal(await store.create(DATA), true);
  assert.equal(await store.create({ ...DATA, "ca-cert.pem": "other" }), false, "a second create loses");
  assert.deepEqual(await store.load(), DATA);
  await store.update({ ...DATA, "root-cert.pem": "roots2" });
  assert.equal((await store.load())?.["root-cert.pem"], "roots2");

  const secret = await server
    .kubeConfig()
    .makeApiClient(CoreV1Api)
    .readNamespacedSecret({ name: "istio-ca-secret", namespace: "store-test" });
  assert.equal(secret.type, "istio.io/ca-root");
  assert.equal(Buffer.from(secret.data?.["ca-key.pem"] ?? "", "base64").toString(), "key");
});

test("a self-signed root in the Secret survives a restart", async () => {
  const kubeConfig = server.kubeConfig();
  const first = await SelfSignedCa.start({
    store: new KubeCaSecretStore(kubeConfig, "istio-system"),
    org: "cluster.local",
  });
  const second = await SelfSignedCa.start({
    store: new KubeCaSecretStore(kubeConfig, "istio-system"),
    org: "cluster.local",
  });
  assert.deepEqual(second.ca.trustBundle(), first.ca.trustBundle());
  assert.equal(second.ca.bundle.certPem, first.ca.bundle.certPem);

  await first.rotate();
  assert.equal(await second.checkAndRotate(), "reloaded");
  assert.equal(second.ca.trustBundle().length, 2);
});
