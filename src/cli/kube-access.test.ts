// The CLI's cluster access against the in-process API server: pods by `name[.namespace]`, the
// control plane's pods, port-forwards through client-node's PortForward, TokenRequest tokens and
// the CA root ConfigMap.
import assert from "node:assert/strict";
import { connect, createServer, type Server } from "node:net";
import { after, before, test } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeTestServer } from "../../test/kube-apiserver/index.ts";
import type { ConfigObject } from "../config/index.ts";
import { hasEnvoySidecar, KubeAccess, type Pod, parsePodRef } from "./kube-access.ts";

let api: KubeTestServer;
let kube: KubeAccess;
/** A TCP server answering each connection with "echo:" and what it read, then closing it. */
let echo: Server;

function pod(name: string, namespace: string, labels: Record<string, string> = {}, phase = "Running"): ConfigObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels },
    spec: { containers: [{ name: "app" }] },
    status: { phase },
  };
}

before(async () => {
  api = await KubeTestServer.start();
  kube = new KubeAccess(api.kubeConfig());
  api.create(pod("web-1", "shop"));
  api.create(pod("istiod-a", "istio-system", { app: "istiod" }));
  api.create(pod("istiod-canary", "istio-system", { app: "istiod", "istio.io/rev": "canary" }));
  api.create(pod("istiod-starting", "istio-system", { app: "istiod" }, "Pending"));
  echo = createServer((socket) => socket.once("data", (data) => socket.end(`echo:${data}`)));
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
});

after(async () => {
  await api.close();
  await new Promise((resolve) => echo.close(resolve));
});

test("a pod argument is name[.namespace], the namespace after the last dot", () => {
  assert.deepEqual(parsePodRef("web-1.shop", "default"), { name: "web-1", namespace: "shop" });
  assert.deepEqual(parsePodRef("web-1", "default"), { name: "web-1", namespace: "default" });
  assert.deepEqual(parsePodRef("a.b.c", "default"), { name: "a.b", namespace: "c" });
});

test("pods resolve in the given namespace, else the default; a missing one is a one-line error", async () => {
  assert.equal((await kube.pod("web-1.shop", "default")).metadata.name, "web-1");
  assert.equal((await kube.pod("web-1", "shop")).metadata.namespace, "shop");
  await assert.rejects(kube.pod("web-1", "default"), { message: "pod web-1 not found in namespace default" });
});

test("the default namespace is -n, else the kubeconfig context's, else default", () => {
  assert.equal(kube.namespaceOrDefault("shop"), "shop");
  assert.equal(kube.namespaceOrDefault(undefined), "default");
  const withNamespace = new KubeConfig();
  withNamespace.loadFromOptions({
    clusters: [{ name: "test", server: api.url }],
    users: [{ name: "test" }],
    contexts: [{ name: "test", cluster: "test", user: "test", namespace: "shop" }],
    currentContext: "test",
  });
  assert.equal(new KubeAccess(withNamespace).namespaceOrDefault(undefined), "shop");
});

test("the control plane is the running app=istiod pods, of one revision when asked", async () => {
  const names = async (revision?: string) =>
    (await kube.controlPlanePods("istio-system", revision)).map((p) => p.metadata.name).sort();
  assert.deepEqual(await names(), ["istiod-a", "istiod-canary"]);
  assert.deepEqual(await names("canary"), ["istiod-canary"]);
  await assert.rejects(kube.controlPlanePods("mesh-system"), { message: 'no running Istio pods in "mesh-system"' });
});

test("a port-forward reaches the pod's registered port and is closed afterwards", async () => {
  const { port } = echo.address() as { port: number };
  api.forwardPodPort({ namespace: "shop", name: "web-1" }, 8080, port);
  let forwarded = "";
  const answer = await kube.withPortForward({ namespace: "shop", name: "web-1" }, 8080, async (address) => {
    forwarded = address;
    return exchange(address, "hello");
  });
  assert.equal(answer, "echo:hello");
  const request = api.requests.find((r) => r.path === "/api/v1/namespaces/shop/pods/web-1/portforward");
  assert.equal(request?.query.get("ports"), "8080");
  await assert.rejects(exchange(forwarded, "again"), { code: "ECONNREFUSED" });
});

test("a port-forward to a port nothing listens on fails with the API server's error", async () => {
  await assert.rejects(
    kube.withPortForward({ namespace: "shop", name: "web-1" }, 9999, (address) => exchange(address, "x")),
    {
      message:
        "port-forward to pod web-1.shop port 9999 failed: error forwarding port 9999 to pod web-1: connection refused",
    },
  );
  await assert.rejects(
    kube.withPortForward({ namespace: "shop", name: "gone" }, 8080, (address) => exchange(address, "x")),
    /^Error: port-forward to pod gone\.shop port 8080 failed: Unexpected server response: 404$/,
  );
});

test("tokens come from the TokenRequest API for the account and audiences", async () => {
  api.create({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: "istio-system" } });
  const token = await kube.serviceAccountToken("istio-system", "default", ["istio-ca"], 3600);
  assert.deepEqual(api.issuedTokens.at(-1), {
    token,
    namespace: "istio-system",
    serviceAccount: "default",
    audiences: ["istio-ca"],
    expirationSeconds: 3600,
  });
  await assert.rejects(kube.serviceAccountToken("istio-system", "nobody", ["istio-ca"], 3600), {
    message: 'failed to create a token for "nobody.istio-system": serviceaccounts "nobody" not found',
  });
});

test("the CA root is root-cert.pem of the istio-ca-root-cert ConfigMap", async () => {
  await assert.rejects(kube.caRoot("istio-system"), {
    message: "ConfigMap istio-system/istio-ca-root-cert not found: no CA root to verify the control plane",
  });
  api.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "istio-ca-root-cert", namespace: "istio-system" },
    data: { "root-cert.pem": "-----BEGIN CERTIFICATE-----\n" },
  });
  assert.equal(await kube.caRoot("istio-system"), "-----BEGIN CERTIFICATE-----\n");
});

test("a pod runs Envoy with an istio-proxy container not from the grpc-agent template", () => {
  const base: Pod = { metadata: { name: "p", namespace: "ns" }, spec: { containers: [{ name: "app" }] } };
  const sidecar: Pod = { ...base, spec: { containers: [{ name: "app" }, { name: "istio-proxy" }] } };
  const native: Pod = { ...base, spec: { containers: [{ name: "app" }], initContainers: [{ name: "istio-proxy" }] } };
  const grpcAgent: Pod = {
    metadata: { ...base.metadata, annotations: { "inject.istio.io/templates": "grpc-agent" } },
    spec: sidecar.spec,
  };
  const grpcAgentStatus: Pod = {
    metadata: { ...base.metadata, annotations: { "sidecar.istio.io/status": '{"templates":["grpc-agent"]}' } },
    spec: sidecar.spec,
  };
  assert.deepEqual([base, sidecar, native, grpcAgent, grpcAgentStatus].map(hasEnvoySidecar), [
    false,
    true,
    true,
    false,
    false,
  ]);
});

/** Sends `text` on a new connection to `address` and reads until the other end closes; nothing read fails. */
function exchange(address: string, text: string): Promise<string> {
  const [host, port] = address.split(":");
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), host);
    let answer = "";
    socket.on("connect", () => socket.write(text));
    socket.on("data", (chunk) => {
      answer += chunk.toString("utf8");
    });
    socket.on("end", () => (answer === "" ? reject(new Error("closed without an answer")) : resolve(answer)));
    socket.on("error", reject);
  });
}
