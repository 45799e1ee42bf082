// The webhook configurations' caBundle patcher against a real API server (test/cluster), without a
// webhook behind it: its revision's injector webhooks get the bundle, again when someone resets it
// and when the bundle changes; unlabelled configurations and other webhooks stay as they were; a
// validator that the API server cannot reach keeps failurePolicy Ignore (the dry-run of an invalid
// Gateway is not refused, so failing closed would lock config out).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { WebhookPatcher } from "../../src/controllers/index.ts";
import { KubeClient } from "../../src/sources/kube/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { freePort } from "../support/free-port.ts";
import { writers } from "../support/managed-fields.ts";
import { waitFor } from "../support/xds-fixtures.ts";

const skip = clusterSkipReason();
const ADMISSION = "/apis/admissionregistration.k8s.io/v1";

interface Webhook {
  name: string;
  clientConfig: { caBundle?: string; url?: string };
  failurePolicy?: string;
}
interface WebhookConfiguration {
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> };
  webhooks: Webhook[];
}

describe("WebhookPatcher", { skip }, () => {
  let cluster: Cluster;
  let namespace: string;
  let patcher: WebhookPatcher;
  let bundle = "-----BEGIN CERTIFICATE-----\none\n-----END CERTIFICATE-----\n";
  const listeners = new Set<() => void>();
  const unique = Date.now().toString(36);
  const rev = `patch-${unique}`;
  const names = {
    injector: `injector-${unique}`,
    unlabelled: `unlabelled-${unique}`,
    validator: `validator-${unique}`,
  };
  const base64 = (pem: string) => Buffer.from(pem).toString("base64");
  const path = (kind: string, name: string) => `${ADMISSION}/${kind}/${name}`;
  const read = async (kind: string, name: string) =>
    (await cluster.must("GET", path(kind, name))).body as WebhookConfiguration;
  let closedUrl: string;
  const webhook = (name: string, extra: object = {}) => ({
    name,
    clientConfig: { url: closedUrl },
    rules: [{ operations: ["CREATE"], apiGroups: ["networking.istio.io"], apiVersions: ["*"], resources: ["*"] }],
    namespaceSelector: { matchLabels: { "sluice.test/patcher": unique } },
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    failurePolicy: "Ignore",
    ...extra,
  });
  const configuration = (kind: string, name: string, labels: Record<string, string>, webhooks: object[]) => ({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind,
    metadata: { name, labels },
    webhooks,
  });

  before(async () => {
    cluster = await sharedCluster();
    namespace = await cluster.namespace("webhook-patcher", { "sluice.test/patcher": unique });
    closedUrl = `https://localhost:${await freePort()}/validate`;
    await cluster.must(
      "POST",
      `${ADMISSION}/mutatingwebhookconfigurations`,
      configuration("MutatingWebhookConfiguration", names.injector, { "istio.io/rev": rev }, [
        webhook("rev.namespace.sidecar-injector.istio.io"),
        webhook("someone.else.example.com"),
      ]),
    );
    await cluster.must(
      "POST",
      `${ADMISSION}/mutatingwebhookconfigurations`,
      configuration("MutatingWebhookConfiguration", names.unlabelled, {}, [webhook("sidecar-injector.istio.io")]),
    );
    await cluster.must(
      "POST",
      `${ADMISSION}/validatingwebhookconfigurations`,
      configuration("ValidatingWebhookConfiguration", names.validator, { "istio.io/rev": rev }, [
        webhook("rev.validation.istio.io"),
      ]),
    );
    patcher = new WebhookPatcher({
      client: new KubeClient(cluster.kubeConfig()),
      revision: rev,
      caBundle: () => bundle,
      onCaBundleChange: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      namespace,
    });
    patcher.start();
  });
  after(async () => {
    patcher?.stop();
    await cluster.request("DELETE", path("mutatingwebhookconfigurations", names.injector));
    await cluster.request("DELETE", path("mutatingwebhookconfigurations", names.unlabelled));
    await cluster.request("DELETE", path("validatingwebhookconfigurations", names.validator));
  });

  const injectorBundles = async () =>
    (await read("mutatingwebhookconfigurations", names.injector)).webhooks.map((w) => w.clientConfig.caBundle);

  test("its revision's injector webhooks get the bundle; other webhooks and unlabelled configurations do not", async () => {
    await waitFor(async () => (await injectorBundles())[0] === base64(bundle), "the injector patched");
    assert.deepEqual(await injectorBundles(), [base64(bundle), undefined]);
    // The caBundle written as istiod writes it: an update under its user agent's command.
    const injector = await read("mutatingwebhookconfigurations", names.injector);
    assert.ok(
      writers(injector).some((w) => w.join(" ") === "pilot-discovery Update "),
      JSON.stringify(writers(injector)),
    );
    const unlabelled = await read("mutatingwebhookconfigurations", names.unlabelled);
    assert.equal(unlabelled.webhooks[0].clientConfig.caBundle, undefined);
  });

  test("a bundle someone removed is put back", async () => {
    await waitFor(async () => (await injectorBundles())[0] === base64(bundle), "the injector patched");
    const current = await read("mutatingwebhookconfigurations", names.injector);
    const reset = {
      ...current,
      webhooks: current.webhooks.map((w) => ({ ...w, clientConfig: { url: w.clientConfig.url } })),
    };
    await cluster.must("PUT", path("mutatingwebhookconfigurations", names.injector), reset);
    await waitFor(async () => (await injectorBundles())[0] === base64(bundle), "the bundle put back");
  });

  test("a new bundle is written", async () => {
    bundle = "-----BEGIN CERTIFICATE-----\ntwo\n-----END CERTIFICATE-----\n";
    for (const listener of listeners) listener();
    await waitFor(async () => (await injectorBundles())[0] === base64(bundle), "the new bundle");
  });

  test("a validator the API server cannot reach gets the bundle but keeps failing open", async () => {
    await waitFor(async () => {
      const w = (await read("validatingwebhookconfigurations", names.validator)).webhooks[0];
      return w.clientConfig.caBundle === base64(bundle);
    }, "the validator patched");
    // The dry run of the always-refused Gateway went through the unreachable webhook (Ignore): allowed.
    const w = (await read("validatingwebhookconfigurations", names.validator)).webhooks[0];
    assert.equal(w.failurePolicy, "Ignore");
    const gateway = await cluster.request("GET", `/apis/networking.istio.io/v1/namespaces/${namespace}/gateways`);
    assert.deepEqual(gateway.body.items, [], "the dry run stored nothing");
  });
});
