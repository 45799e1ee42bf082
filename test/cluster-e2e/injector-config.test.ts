// sluiced in a real cluster takes its injection settings from the istio-sidecar-injector ConfigMap
// of its namespace and revision (`istio-sidecar-injector-<REVISION>`), as istiod does without a
// mounted injection config, and follows it: bin/sluiced.js with --kubeconfig and no
// --injectionValuesFile, its /inject asked directly over TLS (verified with its CA's root). The
// config's injectedAnnotations and policy and the values' hub are used; an edit is taken; a key that
// does not parse is logged and the last good settings stay; a template only the ConfigMap has is
// warned of and a pod asking for it refused. Given --injectionConfigFile and --injectionValuesFile,
// it follows those files instead and never reads the ConfigMap.
import assert from "node:assert/strict";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { applyPatch } from "../../src/webhooks/inject/jsonpatch.ts";
import type { Pod } from "../../src/webhooks/inject/pod.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { eventually, type Sluiced, startSluiced } from "./mesh.ts";

const skip = clusterSkipReason();

interface Admission {
  allowed: boolean;
  patch?: string;
  status?: { message?: string };
}

const configText = (policy: string) =>
  `policy: ${policy}\ninjectedAnnotations:\n  example.com/injected: "yes"\ntemplates:\n  sidecar: "{{ .Values }}"\n  custom: "{{ .Values }}"\n`;
const valuesText = (hub: string) => JSON.stringify({ global: { hub, tag: "1.28.0" } });

/** The lines sluiced logged that match `pattern`. */
const logged = (sluiced: Sluiced | undefined, pattern: RegExp) =>
  (sluiced?.tail(400) ?? "").split("\n").filter((l) => pattern.test(l));

/**
 * sluiced, as revision `rev` in namespace `system` (whose `istio-<rev>` ConfigMap selects only this
 * test's namespaces), with its webhooks on a port of its own, and a function asking its /inject.
 */
async function startInjector(cluster: Cluster, system: string, rev: string, args: string[] = []) {
  const sluiced = await startSluiced(cluster.kubeconfigPath, {
    httpsAddr: "127.0.0.1:0",
    args,
    env: {
      POD_NAMESPACE: system,
      POD_NAME: `sluiced-${rev}`,
      REVISION: rev,
      // This test's sluiced patches no webhook configuration of the shared cluster.
      INJECTION_WEBHOOK_CONFIG_NAME: "",
      VALIDATION_WEBHOOK_CONFIG_NAME: "",
    },
  });
  const listening = logged(sluiced, /"msg":"webhooks listening"/)[0];
  assert.ok(listening, "sluiced logs its webhooks' port");
  const port = (JSON.parse(listening) as { port: number }).port;
  const secret = await cluster.must("GET", `/api/v1/namespaces/${system}/secrets/istio-ca-secret`);
  const ca = Buffer.from(secret.body.data["ca-cert.pem"] as string, "base64").toString();

  /** The webhook's answer for a pod of `namespace`, the pod with its patch applied, and its proxy's image. */
  const inject = async (namespace: string, name: string, annotations: Record<string, string> = {}) => {
    const pod: Pod = {
      metadata: { name, namespace, labels: { app: name }, annotations },
      spec: { containers: [{ name: "app", image: "app:1" }] },
    };
    const review = {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: `uid-${name}`,
        kind: { group: "", version: "v1", kind: "Pod" },
        resource: { group: "", version: "v1", resource: "pods" },
        namespace,
        operation: "CREATE",
        object: pod,
      },
    };
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path: "/inject",
          method: "POST",
          headers: { "content-type": "application/json" },
          ca,
          servername: `istiod.${system}.svc`,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => resolve(Buffer.concat(chunks).toString()));
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify(review));
    });
    const response = (JSON.parse(body) as { response: Admission }).response;
    const patch = response.patch ? JSON.parse(Buffer.from(response.patch, "base64").toString()) : [];
    const injected = applyPatch(pod, patch) as Pod;
    // A native sidecar (the cluster has no node too old for one) is an init container.
    const proxy = [...(injected.spec.initContainers ?? []), ...injected.spec.containers].find(
      (c) => c.name === "istio-proxy",
    );
    return { response, injected, proxyImage: proxy?.image };
  };
  return { sluiced, inject };
}

describe("sluiced follows the istio-sidecar-injector ConfigMap", { skip }, () => {
  let cluster: Cluster;
  let system: string;
  let app: string;
  let rev: string;
  let sluiced: Sluiced | undefined;
  let inject: Awaited<ReturnType<typeof startInjector>>["inject"];
  const configMapPath = () => `/api/v1/namespaces/${system}/configmaps/istio-sidecar-injector-${rev}`;
  const setData = async (data: Record<string, string>) => {
    const current = await cluster.must("GET", configMapPath());
    await cluster.must("PUT", configMapPath(), { ...current.body, data });
  };
  const configMap = (name: string, data: Record<string, string>) =>
    cluster.must("POST", `/api/v1/namespaces/${system}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name },
      data,
    });

  before(async () => {
    cluster = await sharedCluster();
    const unique = Date.now().toString(36);
    rev = `inject-${unique}`;
    const label = { "sluice.test/mesh": `injector-${unique}` };
    system = await cluster.namespace("sluice-injector", label);
    app = await cluster.namespace("injector-app", label);
    await configMap(`istio-${rev}`, {
      mesh: `discoverySelectors:\n- matchLabels:\n    sluice.test/mesh: ${label["sluice.test/mesh"]}\n`,
    });
    await configMap(`istio-sidecar-injector-${rev}`, {
      config: configText("enabled"),
      values: valuesText("one.example.com/istio"),
    });
    ({ sluiced, inject } = await startInjector(cluster, system, rev));
  });
  after(async () => {
    await sluiced?.stop();
  });

  test("the ConfigMap's settings are used, an edit is taken, a key that does not parse changes nothing", async () => {
    const first = await inject(app, "first");
    assert.equal(first.response.allowed, true);
    assert.equal(first.injected.metadata.annotations?.["example.com/injected"], "yes");
    assert.equal(first.proxyImage, "one.example.com/istio/proxyv2:1.28.0");
    const warned = logged(sluiced, /"msg":"injection template not run/);
    assert.equal(warned.length, 1, warned.join("\n"));
    assert.match(warned[0], /"template":"custom"/);
    assert.match(warned[0], new RegExp(`"from":"ConfigMap ${system}/istio-sidecar-injector-${rev} key config"`));

    const custom = await inject(app, "custom", { "inject.istio.io/templates": "custom" });
    assert.equal(custom.response.allowed, false);
    assert.match(
      custom.response.status?.message ?? "",
      /requested template "custom" is a Go template of the injector config/,
    );

    await setData({ config: configText("disabled"), values: valuesText("two.example.com/istio") });
    await eventually("the disabled policy", async () => {
      const seen = await inject(app, "unannotated");
      return { ok: seen.response.allowed && seen.response.patch === undefined, seen: seen.proxyImage };
    });
    const asked = await inject(app, "asked", { "sidecar.istio.io/inject": "true" });
    assert.equal(asked.proxyImage, "two.example.com/istio/proxyv2:1.28.0");

    await setData({ config: "policy: [enabled", values: "{" });
    await eventually("both keys refused", async () => {
      const seen = logged(sluiced, /"msg":"injection settings not changed: the text does not parse"/);
      return { ok: seen.length === 2, seen };
    });
    assert.equal((await inject(app, "kept")).response.patch, undefined, "the disabled policy stays");
    const kept = await inject(app, "kept-asked", { "sidecar.istio.io/inject": "true" });
    assert.equal(kept.proxyImage, "two.example.com/istio/proxyv2:1.28.0");
    assert.equal(kept.injected.metadata.annotations?.["example.com/injected"], "yes");
  });
});

describe("sluiced follows --injectionConfigFile and --injectionValuesFile", { skip }, () => {
  let cluster: Cluster;
  let system: string;
  let dir: string;
  let sluiced: Sluiced | undefined;
  let inject: Awaited<ReturnType<typeof startInjector>>["inject"];
  /** Replaced as a mounted ConfigMap's file is: written beside it, then renamed over it. */
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, `.${name}.tmp`), text);
    renameSync(join(dir, `.${name}.tmp`), join(dir, name));
  };

  before(async () => {
    cluster = await sharedCluster();
    const unique = Date.now().toString(36);
    const rev = `inject-files-${unique}`;
    const label = { "sluice.test/mesh": `injector-files-${unique}` };
    system = await cluster.namespace("sluice-injector-files", label);
    await cluster.must("POST", `/api/v1/namespaces/${system}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `istio-${rev}` },
      data: { mesh: `discoverySelectors:\n- matchLabels:\n    sluice.test/mesh: ${label["sluice.test/mesh"]}\n` },
    });
    // The files win: this ConfigMap's disabled policy is never read.
    await cluster.must("POST", `/api/v1/namespaces/${system}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `istio-sidecar-injector-${rev}` },
      data: { config: configText("disabled"), values: valuesText("configmap.example.com") },
    });
    dir = mkdtempSync(join(tmpdir(), "sluice-injector-"));
    write("config", configText("enabled"));
    write("values", valuesText("file.example.com/istio"));
    ({ sluiced, inject } = await startInjector(cluster, system, rev, [
      ...["--injectionConfigFile", join(dir, "config")],
      ...["--injectionValuesFile", join(dir, "values")],
    ]));
  });
  after(async () => {
    await sluiced?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the files' settings are used and their edits taken", async () => {
    const first = await inject(system, "first");
    assert.equal(first.proxyImage, "file.example.com/istio/proxyv2:1.28.0");
    assert.equal(first.injected.metadata.annotations?.["example.com/injected"], "yes");

    write("values", valuesText("edited.example.com/istio"));
    await eventually("the edited values", async () => {
      const seen = (await inject(system, "edited")).proxyImage;
      return { ok: seen === "edited.example.com/istio/proxyv2:1.28.0", seen };
    });
    write("config", configText("disabled"));
    await eventually("the disabled policy", async () => {
      const seen = await inject(system, "unannotated");
      return { ok: seen.response.patch === undefined, seen: seen.proxyImage };
    });
  });
});
