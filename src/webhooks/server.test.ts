import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { TLSSocket } from "node:tls";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { Registry } from "prom-client";
import { TestCerts } from "../../test/support/certs.ts";
import { assertValidPod } from "../../test/support/pod-check.ts";
import { decodeConfigText } from "../config/decode.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../config/index.ts";
import { applyPatch, type PatchOperation } from "./inject/jsonpatch.ts";
import type { Pod } from "./inject/pod.ts";
import { DEFAULT_INJECTION_SETTINGS } from "./inject/settings.ts";
import { MAX_REQUEST_BODY_BYTES, parseInjectEnvs, startWebhookServer, type WebhookServer } from "./server.ts";

interface Reply {
  status: number;
  contentType: string;
  text: string;
}

interface ReviewReply {
  kind?: string;
  apiVersion?: string;
  response: {
    uid: string;
    allowed: boolean;
    status?: { message: string };
    patch?: string;
    patchType?: string;
    warnings?: string[];
  };
}

const NAMESPACE_LABELS: Record<string, Record<string, string>> = {
  "injection-off": { "istio-injection": "disabled" },
  unlabelled: {},
};

let certs: TestCerts;
let server: WebhookServer;
let ca: Buffer;
const registry = new Registry();

before(async () => {
  certs = new TestCerts();
  certs.issue("istiod", "DNS:istiod.istio-system.svc,IP:127.0.0.1");
  ca = readFileSync(certs.file("ca.crt"));
  server = await startWebhookServer({
    cert: readFileSync(certs.file("istiod.crt")),
    key: readFileSync(certs.file("istiod.key")),
    host: "127.0.0.1",
    port: 0,
    mesh: () => DEFAULT_MESH_CONFIG,
    injection: () => DEFAULT_INJECTION_SETTINGS,
    metrics: registry,
    // Namespaces the server knows the labels of; for the others the API server is trusted to have selected.
    namespaceLabels: (namespace) => NAMESPACE_LABELS[namespace],
    nodes: () => [
      {
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: "new" },
        status: { nodeInfo: { kubeletVersion: "v1.34.1" } },
      },
      {
        apiVersion: "v1",
        kind: "Node",
        metadata: { name: "old" },
        status: { nodeInfo: { kubeletVersion: "v1.32.4" } },
      },
    ],
    log: pino({ level: "silent" }),
  });
});

after(async () => {
  await server.stop();
  certs.remove();
});

function post(path: string, body: string | Buffer, contentType = "application/json"): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: server.port, path, method: "POST", ca, headers: { "content-type": contentType } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers["content-type"] ?? ""),
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function review(apiVersion: string, request: object): string {
  return JSON.stringify({ apiVersion, kind: "AdmissionReview", request });
}

async function admit(path: string, apiVersion: string, request: object): Promise<ReviewReply> {
  const reply = await post(path, review(apiVersion, request));
  assert.equal(reply.status, 200, reply.text);
  return JSON.parse(reply.text) as ReviewReply;
}

const VALID_VS = {
  apiVersion: "networking.istio.io/v1",
  kind: "VirtualService",
  metadata: { name: "reviews", namespace: "default" },
  spec: { hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews" } }] }] },
};

const INVALID_VS = {
  ...VALID_VS,
  spec: { hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews" }, weight: -1 }] }] },
};

describe("/validate", () => {
  for (const apiVersion of ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"]) {
    it(`answers ${apiVersion} with the same version and the request's uid`, async () => {
      const out = await admit("/validate", apiVersion, { uid: "u-1", operation: "CREATE", object: VALID_VS });
      assert.equal(out.apiVersion, apiVersion);
      assert.equal(out.kind, "AdmissionReview");
      assert.deepEqual(out.response, { uid: "u-1", allowed: true });
    });

    it(`denies invalid config with Istio's message (${apiVersion})`, async () => {
      const out = await admit("/validate", apiVersion, { uid: "u-2", operation: "UPDATE", object: INVALID_VS });
      assert.equal(out.apiVersion, apiVersion);
      assert.equal(out.response.uid, "u-2");
      assert.equal(out.response.allowed, false);
      assert.match(out.response.status?.message ?? "", /^configuration is invalid: /);
    });
  }

  it("names the field of a schema error, as the API server would", async () => {
    const object = { ...VALID_VS, spec: { hosts: ["reviews"], http: [{ route: [{ destination: {} }] }] } };
    const out = await admit("/validate", "admission.k8s.io/v1", { uid: "s", operation: "CREATE", object });
    assert.equal(out.response.allowed, false);
    assert.match(
      out.response.status?.message ?? "",
      /\* spec\.http\[0\]\.route\[0\]\.destination\.host: Required value\n/,
    );
  });

  it("denies an integer its field's type cannot hold, naming the field", async () => {
    const route = [{ destination: { host: "reviews" }, weight: 4294967296 }];
    const object = { ...VALID_VS, spec: { hosts: ["reviews"], http: [{ route }] } };
    const out = await admit("/validate", "admission.k8s.io/v1", { uid: "w", operation: "CREATE", object });
    assert.equal(out.response.allowed, false);
    assert.equal(
      out.response.status?.message,
      "configuration is invalid: spec.http[0].route[0].weight: json: cannot unmarshal number 4294967296 into Go value of type int32",
    );
  });

  it("rejects a kind it does not know, naming group, version and kind", async () => {
    const object = { apiVersion: "networking.istio.io/v1", kind: "Frobnicator", metadata: { name: "x" }, spec: {} };
    const out = await admit("/validate", "admission.k8s.io/v1", { uid: "u", operation: "CREATE", object });
    assert.equal(out.response.allowed, false);
    assert.equal(out.response.status?.message, "unrecognized type networking.istio.io/v1, Kind=Frobnicator");
  });

  it("validates any version of a known kind", async () => {
    const object = { ...VALID_VS, apiVersion: "networking.istio.io/v1alpha2" };
    const out = await admit("/validate", "admission.k8s.io/v1", { uid: "u", operation: "CREATE", object });
    assert.equal(out.response.allowed, true);
  });

  it("rejects unknown top-level fields once the rest is valid", async () => {
    const object = { ...VALID_VS, extra: 1 };
    const out = await admit("/validate", "admission.k8s.io/v1", { uid: "u", operation: "CREATE", object });
    assert.equal(out.response.allowed, false);
    assert.equal(out.response.status?.message, 'unknown field "extra" on VirtualService resource default/reviews');
  });

  it("returns warnings with an allowed answer", async () => {
    const object = {
      apiVersion: "networking.istio.io/v1",
      kind: "Gateway",
      metadata: { name: "gw", namespace: "default" },
      spec: {
        selector: { istio: "ingressgateway" },
        servers: [
          {
            port: { number: 443, name: "tls", protocol: "TLS" },
            hosts: ["*"],
            tls: { mode: "PASSTHROUGH", serverCertificate: "/etc/cert.pem", privateKey: "/etc/key.pem" },
          },
        ],
      },
    };
    const out = await admit("/validate", "admission.k8s.io/v1", { uid: "u", operation: "CREATE", object });
    assert.equal(out.response.allowed, true);
    assert.deepEqual(out.response.warnings, ["PASSTHROUGH mode does not use certificates, they will be ignored"]);
  });

  it("allows DELETE without looking at the object", async () => {
    const out = await admit("/validate", "admission.k8s.io/v1", { uid: "u", operation: "DELETE", object: INVALID_VS });
    assert.deepEqual(out.response, { uid: "u", allowed: true });
  });

  it("applies the always-reject annotation", async () => {
    const object = {
      ...VALID_VS,
      metadata: { ...VALID_VS.metadata, annotations: { "internal.istio.io/webhook-always-reject": "true" } },
    };
    const out = await admit("/validate", "admission.k8s.io/v1", { uid: "u", operation: "CREATE", object });
    assert.equal(
      out.response.status?.message,
      'configuration is invalid: "internal.istio.io/webhook-always-reject" annotation found, rejecting',
    );
  });

  it("answers 415 to another content type", async () => {
    const reply = await post("/validate", review("admission.k8s.io/v1", { uid: "u" }), "text/yaml");
    assert.equal(reply.status, 415);
    assert.equal(reply.text, "invalid Content-Type, want `application/json`\n");
  });

  it("answers 400 to a body over 6 MiB, and to an empty body", async () => {
    const big = await post("/validate", Buffer.alloc(MAX_REQUEST_BODY_BYTES + 1, 32));
    assert.equal(big.status, 400);
    assert.equal(big.text, `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}\n`);
    const empty = await post("/validate", "");
    assert.equal(empty.status, 400);
    assert.equal(empty.text, "no body found\n");
  });

  it("answers a body that is not an AdmissionReview with 200 and a denial", async () => {
    const reply = await post("/validate", "{not json");
    assert.equal(reply.status, 200);
    const out = JSON.parse(reply.text) as ReviewReply;
    assert.equal(out.apiVersion, undefined);
    assert.equal(out.response.allowed, false);
    assert.match(out.response.status?.message ?? "", /^could not decode body: /);
  });
});

const APP_POD: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    generateName: "reviews-v1-7d9f8b-",
    namespace: "",
    labels: { app: "reviews", version: "v1", "pod-template-hash": "7d9f8b" },
    ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "reviews-v1-7d9f8b", controller: true }],
  },
  spec: {
    containers: [
      {
        name: "reviews",
        image: "reviews:1",
        ports: [{ name: "http", containerPort: 9080, protocol: "TCP" }],
        livenessProbe: { httpGet: { path: "/health", port: 9080 }, timeoutSeconds: 1 },
      },
    ],
  },
};

function patchOf(out: ReviewReply): PatchOperation[] {
  assert.equal(out.response.patchType, "JSONPatch");
  return JSON.parse(Buffer.from(out.response.patch ?? "", "base64").toString("utf8")) as PatchOperation[];
}

describe("/inject", () => {
  for (const apiVersion of ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"]) {
    it(`patches a pod into a valid injected pod (${apiVersion})`, async () => {
      const out = await admit("/inject", apiVersion, { uid: "p-1", namespace: "bookinfo", object: APP_POD });
      assert.equal(out.apiVersion, apiVersion);
      assert.equal(out.response.uid, "p-1");
      assert.equal(out.response.allowed, true);
      const pod = applyPatch(APP_POD, patchOf(out));
      assertValidPod(pod);
      assert.deepEqual(
        pod.spec.containers.map((c) => c.name),
        ["reviews", "istio-proxy"],
      );
      const env = new Map(pod.spec.containers[1].env?.map((e) => [e.name, e.value]));
      assert.equal(env.get("ISTIO_META_WORKLOAD_NAME"), "reviews-v1");
      assert.equal(env.get("ISTIO_META_OWNER"), "kubernetes://apis/apps/v1/namespaces/bookinfo/deployments/reviews-v1");
      assert.deepEqual(pod.spec.containers[0].livenessProbe, {
        httpGet: { path: "/app-health/reviews/livez", port: 15020 },
        timeoutSeconds: 1,
      });
    });
  }

  it("runs native sidecars on a node whose kubelet supports them (ENABLE_NATIVE_SIDECARS=auto)", async () => {
    const onNewNode = { ...APP_POD, spec: { ...APP_POD.spec, nodeName: "new" } };
    const out = await admit("/inject", "admission.k8s.io/v1", { uid: "n", namespace: "x", object: onNewNode });
    const pod = applyPatch(onNewNode, patchOf(out));
    assertValidPod(pod);
    assert.deepEqual(
      pod.spec.initContainers?.map((c) => [c.name, c.restartPolicy]),
      [
        ["istio-init", undefined],
        ["istio-proxy", "Always"],
      ],
    );
    // Unscheduled, the pod could land on the old node: every node must support them.
    const unscheduled = await admit("/inject", "admission.k8s.io/v1", { uid: "u", namespace: "x", object: APP_POD });
    assert.ok(applyPatch(APP_POD, patchOf(unscheduled)).spec.containers.some((c) => c.name === "istio-proxy"));
  });

  it("takes cluster, network and other env from the path", async () => {
    const out = await admit("/inject/cluster/east/net/network--slash--1/foo/bar", "admission.k8s.io/v1", {
      uid: "p",
      namespace: "bookinfo",
      object: APP_POD,
    });
    const pod = applyPatch(APP_POD, patchOf(out));
    const proxy = pod.spec.containers.find((c) => c.name === "istio-proxy");
    const env = new Map(proxy?.env?.map((e) => [e.name, e.value]));
    assert.equal(env.get("ISTIO_META_CLUSTER_ID"), "east");
    assert.equal(env.get("ISTIO_META_NETWORK"), "network/1");
    assert.equal(env.get("FOO"), "bar");
    assert.equal(pod.metadata.labels?.["topology.istio.io/network"], "network/1");
  });

  it("leaves host-network pods and opted-out pods alone", async () => {
    const hostNetwork = { ...APP_POD, spec: { ...APP_POD.spec, hostNetwork: true } };
    const a = await admit("/inject", "admission.k8s.io/v1", { uid: "h", namespace: "x", object: hostNetwork });
    assert.deepEqual(a.response, { uid: "h", allowed: true });
    const optedOut = {
      ...APP_POD,
      metadata: { ...APP_POD.metadata, labels: { "sidecar.istio.io/inject": "false" } },
    };
    const b = await admit("/inject", "admission.k8s.io/v1", { uid: "o", namespace: "x", object: optedOut });
    assert.deepEqual(b.response, { uid: "o", allowed: true });
  });

  it("applies the webhook configuration's namespace selectors when it knows the namespace", async () => {
    const off = await admit("/inject", "admission.k8s.io/v1", {
      uid: "1",
      namespace: "injection-off",
      object: APP_POD,
    });
    assert.deepEqual(off.response, { uid: "1", allowed: true });
    const unlabelled = await admit("/inject", "admission.k8s.io/v1", {
      uid: "2",
      namespace: "unlabelled",
      object: APP_POD,
    });
    assert.deepEqual(unlabelled.response, { uid: "2", allowed: true });
    const asked = {
      ...APP_POD,
      metadata: { ...APP_POD.metadata, labels: { ...APP_POD.metadata.labels, "sidecar.istio.io/inject": "true" } },
    };
    const injected = await admit("/inject", "admission.k8s.io/v1", {
      uid: "3",
      namespace: "unlabelled",
      object: asked,
    });
    assert.ok(applyPatch(asked, patchOf(injected)).spec.containers.some((c) => c.name === "istio-proxy"));
  });

  it("denies a pod with an invalid injection annotation", async () => {
    const bad = {
      ...APP_POD,
      metadata: { ...APP_POD.metadata, annotations: { "sidecar.istio.io/interceptionMode": "MAGIC" } },
    };
    const out = await admit("/inject", "admission.k8s.io/v1", { uid: "b", namespace: "x", object: bad });
    assert.equal(out.response.allowed, false);
    assert.match(
      out.response.status?.message ?? "",
      /invalid value 'MAGIC' for annotation 'sidecar.istio.io\/interceptionMode': interceptionMode invalid/,
    );
  });

  it("checks content type and body as /validate does", async () => {
    assert.equal((await post("/inject", "{}", "application/yaml")).status, 415);
    assert.equal((await post("/inject", "")).status, 400);
  });
});

describe("metrics", () => {
  async function value(name: string, labels: Record<string, string> = {}): Promise<number> {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
    const sample = metric?.values.find((v) =>
      Object.entries(labels).every(([k, l]) => (v.labels as Record<string, unknown>)[k] === l),
    );
    return sample?.value ?? 0;
  }
  const resource = { group: "networking.istio.io", version: "v1", resource: "virtualservices" };

  it("counts validations by resource and reason, and refused requests by status", async () => {
    const passed = await value("galley_validation_passed", resource);
    const failed = await value("galley_validation_failed", { ...resource, reason: "invalid_resource" });
    const unsupported = await value("galley_validation_http_error", { status: "415" });
    await admit("/validate", "admission.k8s.io/v1", { uid: "m", operation: "CREATE", resource, object: VALID_VS });
    await admit("/validate", "admission.k8s.io/v1", { uid: "m", operation: "CREATE", resource, object: INVALID_VS });
    await post("/validate", "{}", "text/plain");
    assert.equal(await value("galley_validation_passed", resource), passed + 1);
    assert.equal(await value("galley_validation_failed", { ...resource, reason: "invalid_resource" }), failed + 1);
    assert.equal(await value("galley_validation_http_error", { status: "415" }), unsupported + 1);
  });

  it("counts injection requests, skips and failures", async () => {
    const requests = await value("sidecar_injection_requests_total");
    const skips = await value("sidecar_injection_skip_total");
    const failures = await value("sidecar_injection_failure_total");
    const hostNetwork = { ...APP_POD, spec: { ...APP_POD.spec, hostNetwork: true } };
    await admit("/inject", "admission.k8s.io/v1", { uid: "m", namespace: "x", object: hostNetwork });
    await post("/inject", "");
    assert.equal(await value("sidecar_injection_requests_total"), requests + 2);
    assert.equal(await value("sidecar_injection_skip_total"), skips + 1);
    assert.equal(await value("sidecar_injection_failure_total"), failures + 1);
  });
});

describe("the webhook and kube-inject", () => {
  const testdata = join(dirname(fileURLToPath(import.meta.url)), "testdata");

  /** The pod a workload's controller would create, as the API server sends it to the webhook. */
  function podOf(obj: ConfigObject): { pod: Pod; namespace: string } | undefined {
    const namespace = obj.metadata.namespace ?? "default";
    if (obj.kind === "Pod") return { pod: structuredClone(obj) as unknown as Pod, namespace };
    const spec = obj.spec as { template?: Pod; jobTemplate?: { spec: { template: Pod } } };
    const template = spec.template ?? spec.jobTemplate?.spec.template;
    if (!template) return undefined;
    const name = obj.metadata.name ?? "";
    const controller =
      obj.kind === "Deployment"
        ? { apiVersion: "apps/v1", kind: "ReplicaSet", name: `${name}-5d8f7b`, controller: true }
        : obj.kind === "CronJob"
          ? { apiVersion: "batch/v1", kind: "Job", name: `${name}-29400000`, controller: true }
          : { apiVersion: obj.apiVersion, kind: obj.kind, name, controller: true };
    const labels = {
      ...template.metadata?.labels,
      ...(obj.kind === "Deployment" ? { "pod-template-hash": "5d8f7b" } : {}),
    };
    const metadata = {
      ...template.metadata,
      labels,
      generateName: `${controller.name}-`,
      ownerReferences: [controller],
    };
    return { pod: { apiVersion: "v1", kind: "Pod", metadata, spec: structuredClone(template.spec) }, namespace };
  }

  for (const file of ["deployment.yaml", "statefulset.yaml", "jobs.yaml", "annotations.yaml", "templates.yaml"]) {
    it(`inject the same pod spec (${file})`, async () => {
      const path = join(testdata, file);
      const inputs = decodeConfigText(readFileSync(path, "utf8"), path);
      const outputs = decodeConfigText(readFileSync(`${path}.injected`, "utf8"), `${path}.injected`);
      let compared = 0;
      for (const [i, doc] of inputs.entries()) {
        const made = doc.object && podOf(doc.object);
        if (!made) continue;
        const out = await admit("/inject", "admission.k8s.io/v1", {
          uid: "c",
          namespace: made.namespace,
          object: made.pod,
        });
        const injected = applyPatch(made.pod, patchOf(out));
        const expected = outputs[i].object as ConfigObject;
        const expectedSpec =
          expected.kind === "Pod"
            ? expected.spec
            : ((expected.spec as { template?: Pod }).template?.spec ??
              (expected.spec as { jobTemplate: { spec: { template: Pod } } }).jobTemplate.spec.template.spec);
        assert.deepEqual(injected.spec, expectedSpec, `${file} document ${i}`);
        compared++;
      }
      assert.ok(compared > 0);
    });
  }
});

describe("TLS", () => {
  function servedCommonName(): Promise<{ status: number; commonName: string }> {
    return new Promise((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: server.port, path: "/ready", ca, agent: false }, (res) => {
        const peer = (res.socket as TLSSocket).getPeerCertificate();
        res.resume();
        resolve({ status: res.statusCode ?? 0, commonName: String(peer.subject.CN) });
      });
      req.on("error", reject);
      req.end();
    });
  }

  it("serves a renewed certificate to new connections, and /ready", async () => {
    assert.deepEqual(await servedCommonName(), { status: 200, commonName: "istiod" });
    certs.issue("istiod-renewed", "DNS:istiod.istio-system.svc,IP:127.0.0.1");
    server.updateCertificate(
      readFileSync(certs.file("istiod-renewed.crt")),
      readFileSync(certs.file("istiod-renewed.key")),
    );
    assert.deepEqual(await servedCommonName(), { status: 200, commonName: "istiod-renewed" });
  });
});

describe("parseInjectEnvs", () => {
  it("reads key/value path segments and the legacy :ENV: form", () => {
    assert.deepEqual(parseInjectEnvs("/inject"), {});
    assert.deepEqual(parseInjectEnvs("/inject/cluster/c1/net/n1/"), {
      ISTIO_META_CLUSTER_ID: "c1",
      ISTIO_META_NETWORK: "n1",
    });
    assert.deepEqual(parseInjectEnvs("/inject/:ENV:cluster=c2:ENV:net=n2"), {
      ISTIO_META_CLUSTER_ID: "c2",
      ISTIO_META_NETWORK: "n2",
    });
    assert.deepEqual(parseInjectEnvs("/inject/odd"), {});
  });
});

it("injectTemplates renders the templates under the server's settings, for /debug/inject", () => {
  const templates = server.injectTemplates();
  assert.deepEqual(Object.keys(templates).sort(), ["gateway", "grpc-agent", "grpc-simple", "sidecar"]);
  assert.match(templates.sidecar, /name: istio-proxy/);
});
