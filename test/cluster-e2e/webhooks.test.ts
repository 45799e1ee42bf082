// sluiced's webhooks registered for real (issue 29): bin/sluiced.js with --kubeconfig, its CA and
// its webhooks on, as revision <rev> in a made-up system namespace (the cluster is shared, so every
// selector here names only this test's namespaces), its certificate also for `localhost`
// (ISTIOD_CUSTOM_HOST) so the API server can call it at https://localhost:<port>. It patches the
// caBundle of its revision's webhook configurations (not another revision's), switches validation to
// fail-closed once the API server shows it refusing invalid config, and then the API server itself
// refuses an invalid VirtualService with Istio's message and injects a Pod of a namespace labelled
// with the revision. Config labelled for another revision is not its own. A revision tag made by
// `sluice tag set` is patched too (it carries the revision's label) and injects its namespaces.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { freePort } from "../support/free-port.ts";
import { eventually, type Sluiced, startSluiced } from "./mesh.ts";

const skip = clusterSkipReason();
const ADMISSION = "/apis/admissionregistration.k8s.io/v1";
const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));

interface WebhookConfiguration {
  webhooks: { name: string; clientConfig: { caBundle?: string }; failurePolicy?: string }[];
}

describe("sluiced's webhooks, called by the API server", { skip }, () => {
  let cluster: Cluster;
  let system: string;
  let app: string;
  let rev: string;
  let dir: string;
  let sluiced: Sluiced | undefined;
  let label: Record<string, string>;
  const names = { injector: "", other: "", validator: "", tag: "" };
  const read = async (kind: string, name: string) =>
    (await cluster.must("GET", `${ADMISSION}/${kind}/${name}`)).body as WebhookConfiguration;
  /** The root sluiced's CA keeps in istio-ca-secret, as the API server is given it (base64). */
  const caBundle = async () => {
    const secret = await cluster.must("GET", `/api/v1/namespaces/${system}/secrets/istio-ca-secret`);
    return secret.body.data["ca-cert.pem"] as string;
  };

  /** Creates a Pod (and its ServiceAccount) through the API server: its containers and annotations as admitted. */
  const createPod = async (namespace: string) => {
    await cluster.must("POST", `/api/v1/namespaces/${namespace}/serviceaccounts`, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "app" },
    });
    const res = await cluster.must("POST", `/api/v1/namespaces/${namespace}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "app", labels: { app: "app" } },
      spec: { serviceAccountName: "app", containers: [{ name: "app", image: "app:1" }] },
    });
    const pod = res.body as {
      metadata: { annotations?: Record<string, string> };
      spec: { containers: { name: string }[]; initContainers?: { name: string }[] };
    };
    const containers = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].map((c) => c.name);
    return { containers, annotations: pod.metadata.annotations ?? {} };
  };

  before(async () => {
    cluster = await sharedCluster();
    const unique = Date.now().toString(36);
    rev = `rev-${unique}`;
    label = { "sluice.test/mesh": `webhooks-${unique}` };
    system = await cluster.namespace("sluice-webhooks", label);
    app = await cluster.namespace("webhooks-app", { ...label, "istio.io/rev": rev });
    const port = await freePort();
    const url = (path: string) => `https://localhost:${port}${path}`;
    const injector = (name: string, revision: string) => ({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: { name, labels: { "istio.io/rev": revision } },
      webhooks: [
        {
          name: `rev.namespace.sidecar-injector.istio.io`,
          clientConfig: { url: url("/inject") },
          rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
          namespaceSelector: { matchLabels: { "istio.io/rev": revision } },
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
          failurePolicy: "Fail",
          reinvocationPolicy: "Never",
        },
      ],
    });
    names.injector = `istio-sidecar-injector-${rev}`;
    names.other = `istio-sidecar-injector-other-${unique}`;
    names.validator = `istio-validator-${rev}-${system}`;
    await cluster.must("POST", `${ADMISSION}/mutatingwebhookconfigurations`, injector(names.injector, rev));
    await cluster.must("POST", `${ADMISSION}/mutatingwebhookconfigurations`, injector(names.other, `other-${unique}`));
    await cluster.must("POST", `${ADMISSION}/validatingwebhookconfigurations`, {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: names.validator, labels: { "istio.io/rev": rev } },
      webhooks: [
        {
          name: "rev.validation.istio.io",
          clientConfig: { url: url("/validate") },
          rules: [
            {
              operations: ["CREATE", "UPDATE"],
              apiGroups: ["networking.istio.io", "security.istio.io", "telemetry.istio.io", "extensions.istio.io"],
              apiVersions: ["*"],
              resources: ["*"],
            },
          ],
          namespaceSelector: { matchLabels: label },
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
          failurePolicy: "Ignore",
        },
      ],
    });
    dir = mkdtempSync(join(tmpdir(), "sluice-webhooks-"));
    const meshConfig = join(dir, "mesh.yaml");
    writeFileSync(
      meshConfig,
      `discoverySelectors:\n- matchLabels:\n    sluice.test/mesh: ${label["sluice.test/mesh"]}\n`,
    );
    sluiced = await startSluiced(cluster.kubeconfigPath, {
      secureGrpcAddr: "127.0.0.1:0",
      httpsAddr: `127.0.0.1:${port}`,
      meshConfig,
      env: { POD_NAME: "sluiced-webhooks-0", POD_NAMESPACE: system, REVISION: rev, ISTIOD_CUSTOM_HOST: "localhost" },
    });
  });
  after(async () => {
    await sluiced?.stop();
    for (const [kind, name] of [
      ["mutatingwebhookconfigurations", names.injector],
      ["mutatingwebhookconfigurations", names.other],
      ["validatingwebhookconfigurations", names.validator],
      ["mutatingwebhookconfigurations", names.tag],
    ]) {
      if (name) await cluster.request("DELETE", `${ADMISSION}/${kind}/${name}`);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test("patches its revision's injector with its CA, and leaves another revision's alone", async () => {
    await eventually("the injector's caBundle", async () => {
      const seen = (await read("mutatingwebhookconfigurations", names.injector)).webhooks[0].clientConfig.caBundle;
      return { ok: seen !== undefined && seen === (await caBundle()), seen: String(seen).slice(0, 20) };
    });
    const other = await read("mutatingwebhookconfigurations", names.other);
    assert.equal(other.webhooks[0].clientConfig.caBundle, undefined);
  });

  test("patches its validator and makes it fail closed once the API server shows it refusing", async () => {
    await eventually("the validator patched and failing closed", async () => {
      const seen = (await read("validatingwebhookconfigurations", names.validator)).webhooks[0];
      const ok = seen.clientConfig.caBundle === (await caBundle()) && seen.failurePolicy === "Fail";
      return { ok, seen: `${seen.failurePolicy} ${String(seen.clientConfig.caBundle).slice(0, 20)}` };
    });
  });

  test("the API server refuses an invalid VirtualService with Istio's message", async () => {
    await eventually("the validator failing closed", async () => {
      const seen = (await read("validatingwebhookconfigurations", names.validator)).webhooks[0].failurePolicy;
      return { ok: seen === "Fail", seen };
    });
    const res = await cluster.request("POST", `/apis/networking.istio.io/v1/namespaces/${app}/virtualservices`, {
      apiVersion: "networking.istio.io/v1",
      kind: "VirtualService",
      metadata: { name: "everything" },
      spec: { hosts: ["*"], http: [{ route: [{ destination: { host: "reviews" } }] }] },
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(
      res.body.message,
      'admission webhook "rev.validation.istio.io" denied the request: configuration is invalid: wildcard host * is not allowed for virtual services bound to the mesh gateway',
    );
  });

  test("config labelled for another revision is not its own; its revision's and unlabelled config are", async () => {
    const vs = (name: string, labels: Record<string, string>) =>
      cluster.must("POST", `/apis/networking.istio.io/v1/namespaces/${app}/virtualservices`, {
        apiVersion: "networking.istio.io/v1",
        kind: "VirtualService",
        metadata: { name, labels },
        spec: { hosts: [`${name}.example.com`], http: [{ route: [{ destination: { host: "reviews" } }] }] },
      });
    await vs("theirs", { "istio.io/rev": "someone-else" });
    await vs("ours", { "istio.io/rev": rev });
    await vs("everyones", {});
    await eventually("its own VirtualServices in configz", async () => {
      const configs = (await sluiced?.debug("configz")) as {
        kind: string;
        metadata: { name: string; namespace: string };
      }[];
      const seen = configs
        .filter((c) => c.kind === "VirtualService" && c.metadata.namespace === app)
        .map((c) => c.metadata.name)
        .sort();
      return { ok: JSON.stringify(seen) === JSON.stringify(["everyones", "ours"]), seen };
    });
  });

  test("the API server has a Pod of the revision's namespace injected", async () => {
    await eventually("the injector patched", async () => {
      const seen = (await read("mutatingwebhookconfigurations", names.injector)).webhooks[0].clientConfig.caBundle;
      return { ok: seen !== undefined, seen };
    });
    const { containers } = await createPod(app);
    assert.ok(containers.includes("istio-proxy"), `containers: ${containers.join(", ")}`);
  });

  test("a revision tag: patched as the revision's own injector, and its namespaces injected by the revision", async () => {
    const tag = `${rev}-tag`;
    const set = spawnSync(
      process.execPath,
      [SLUICE, "tag", "set", tag, "--revision", rev, "-i", system, "--kubeconfig", cluster.kubeconfigPath],
      { encoding: "utf8" },
    );
    assert.equal(set.status, 0, set.stderr);
    names.tag = `istio-revision-tag-${tag}-${system}`;
    // The tag's webhooks call the revision's injector where it is called: here its URL
    // (https://localhost:<port>/inject, as the revision's own webhook above), since the test cluster
    // has no kube-proxy to reach a Service reference. The tag copied the revision's bundle; taken
    // away (a tag made before the CA, or a rotated root), sluiced writes it again.
    const path = `${ADMISSION}/mutatingwebhookconfigurations/${names.tag}`;
    const made = (await cluster.must("GET", path)).body as WebhookConfiguration;
    for (const w of made.webhooks) delete w.clientConfig.caBundle;
    await cluster.must("PUT", path, made);
    await eventually("the tag's webhooks patched with the CA", async () => {
      const seen = (await read("mutatingwebhookconfigurations", names.tag)).webhooks.map(
        (w) => w.clientConfig.caBundle,
      );
      const ca = await caBundle();
      return { ok: seen.length === 2 && seen.every((b) => b === ca), seen: seen.map((b) => String(b).slice(0, 20)) };
    });
    const tagged = await cluster.namespace("webhooks-tagged", { ...label, "istio.io/rev": tag });
    const { containers, annotations } = await createPod(tagged);
    assert.ok(containers.includes("istio-proxy"), `containers: ${containers.join(", ")}`);
    // Injected by the tagged revision: the pod's istio.io/rev annotation names the revision, not the tag.
    assert.equal(annotations["istio.io/rev"], rev);
  });
});
