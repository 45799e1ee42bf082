// The CLI's cluster access against a real API server (test/cluster): pods by `name[.namespace]`,
// the control plane's pods, TokenRequest tokens (checked with a TokenReview) and the CA root
// ConfigMap. Port-forwards go through client-node's PortForward to test/portforward's front, which
// passes everything else to the real API server: a test cluster has no kubelet to forward to.
import assert from "node:assert/strict";
import { connect, createServer, type Server } from "node:net";
import { after, before, test } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { type Cluster, clusterSkipReason, sharedCluster } from "../../test/cluster/index.ts";
import { PortForwardFront } from "../../test/portforward/index.ts";
import type { ConfigObject } from "../config/index.ts";
import { hasEnvoySidecar, KubeAccess, type Pod, parsePodRef } from "./kube-access.ts";

const skip = clusterSkipReason();

let cluster: Cluster;
let kube: KubeAccess;
let front: PortForwardFront;
/** The CLI's access through the port-forwarding front. */
let forwarding: KubeAccess;
/** A TCP server answering each connection with "echo:" and what it read, then closing it. */
let echo: Server;
/** The test's namespaces: "shop" and "istio-system" stand-ins. */
let shop: string;
let istio: string;

function pod(name: string, namespace: string, labels: Record<string, string> = {}): ConfigObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels },
    spec: { containers: [{ name: "app", image: "app" }] },
  };
}

/** Creates the pod and sets its phase through the status subresource (no kubelet sets it here). */
async function createPod(obj: ConfigObject, phase = "Running"): Promise<void> {
  const { namespace, name } = obj.metadata as { namespace: string; name: string };
  const created = await cluster.must("POST", `/api/v1/namespaces/${namespace}/pods`, obj);
  await cluster.must("PUT", `/api/v1/namespaces/${namespace}/pods/${name}/status`, {
    ...created.body,
    status: { ...created.body.status, phase },
  });
}

before(async () => {
  if (skip) return;
  cluster = await sharedCluster();
  kube = new KubeAccess(cluster.kubeConfig());
  front = await PortForwardFront.start(cluster.kubeConfig());
  forwarding = new KubeAccess(front.kubeConfig());
  shop = await cluster.namespace("shop");
  istio = await cluster.namespace("istio-system");
  await createPod(pod("web-1", shop));
  await createPod(pod("istiod-a", istio, { app: "istiod" }));
  await createPod(pod("istiod-canary", istio, { app: "istiod", "istio.io/rev": "canary" }));
  await createPod(pod("istiod-starting", istio, { app: "istiod" }), "Pending");
  echo = createServer((socket) => socket.once("data", (data) => socket.end(`echo:${data}`)));
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
});

after(async () => {
  await front?.close();
  if (echo) await new Promise((resolve) => echo.close(resolve));
});

test("a pod argument is name[.namespace], the namespace after the last dot", () => {
  assert.deepEqual(parsePodRef("web-1.shop", "default"), { name: "web-1", namespace: "shop" });
  assert.deepEqual(parsePodRef("web-1", "default"), { name: "web-1", namespace: "default" });
  assert.deepEqual(parsePodRef("a.b.c", "default"), { name: "a.b", namespace: "c" });
});

test("pods resolve in the given namespace, else the default; a missing one is a one-line error", { skip }, async () => {
  assert.equal((await kube.pod(`web-1.${shop}`, "default")).metadata.name, "web-1");
  assert.equal((await kube.pod("web-1", shop)).metadata.namespace, shop);
  await assert.rejects(kube.pod("web-1", istio), { message: `pod web-1 not found in namespace ${istio}` });
});

test("the default namespace is -n, else the kubeconfig context's, else default", { skip }, () => {
  assert.equal(kube.namespaceOrDefault("shop"), "shop");
  assert.equal(kube.namespaceOrDefault(undefined), "default");
  const withNamespace = new KubeConfig();
  withNamespace.loadFromOptions({
    clusters: [{ name: "test", server: cluster.url }],
    users: [{ name: "test" }],
    contexts: [{ name: "test", cluster: "test", user: "test", namespace: "shop" }],
    currentContext: "test",
  });
  assert.equal(new KubeAccess(withNamespace).namespaceOrDefault(undefined), "shop");
});

test("the control plane is the running app=istiod pods, of one revision when asked", { skip }, async () => {
  const names = async (revision?: string) =>
    (await kube.controlPlanePods(istio, revision)).map((p) => p.metadata.name).sort();
  assert.deepEqual(await names(), ["istiod-a", "istiod-canary"]);
  assert.deepEqual(await names("canary"), ["istiod-canary"]);
  await assert.rejects(kube.controlPlanePods(shop), { message: `no running Istio pods in "${shop}"` });
});

test("a port-forward reaches the pod's registered port and is closed afterwards", { skip }, async () => {
  const { port } = echo.address() as { port: number };
  front.forwardPodPort({ namespace: shop, name: "web-1" }, 8080, port);
  let forwarded = "";
  const answer = await forwarding.withPortForward({ namespace: shop, name: "web-1" }, 8080, async (address) => {
    forwarded = address;
    return exchange(address, "hello");
  });
  assert.equal(answer, "echo:hello");
  assert.deepEqual(front.forwardRequests.at(-1), { namespace: shop, pod: "web-1", ports: ["8080"] });
  await assert.rejects(exchange(forwarded, "again"), { code: "ECONNREFUSED" });
});

test("a port-forward to a port nothing listens on fails with the API server's error", { skip }, async () => {
  await assert.rejects(
    forwarding.withPortForward({ namespace: shop, name: "web-1" }, 9999, (address) => exchange(address, "x")),
    {
      message: `port-forward to pod web-1.${shop} port 9999 failed: error forwarding port 9999 to pod web-1: connection refused`,
    },
  );
  await assert.rejects(
    forwarding.withPortForward({ namespace: shop, name: "gone" }, 8080, (address) => exchange(address, "x")),
    new RegExp(`^Error: port-forward to pod gone\\.${shop} port 8080 failed: Unexpected server response: 404$`),
  );
});

test("tokens come from the TokenRequest API for the account and audiences", { skip }, async () => {
  await cluster.must("POST", `/api/v1/namespaces/${istio}/serviceaccounts`, {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: { name: "default", namespace: istio },
  });
  const token = await kube.serviceAccountToken(istio, "default", ["istio-ca"], 3600);
  // The API server itself says whose token it is, and for which audience.
  const review = await cluster.must("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenReview",
    spec: { token, audiences: ["istio-ca"] },
  });
  assert.equal(review.body.status.authenticated, true, JSON.stringify(review.body.status));
  assert.equal(review.body.status.user.username, `system:serviceaccount:${istio}:default`);
  assert.deepEqual(review.body.status.audiences, ["istio-ca"]);
  const claims = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8"));
  assert.equal(claims.exp - claims.iat, 3600);
  // Not a token for the API server's own audience.
  const asApiServer = await cluster.must("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenReview",
    spec: { token },
  });
  assert.equal(asApiServer.body.status.authenticated ?? false, false);

  await assert.rejects(kube.serviceAccountToken(istio, "nobody", ["istio-ca"], 3600), {
    message: `failed to create a token for "nobody.${istio}": serviceaccounts "nobody" not found`,
  });
});

test("the CA root is root-cert.pem of the istio-ca-root-cert ConfigMap", { skip }, async () => {
  await assert.rejects(kube.caRoot(istio), {
    message: `ConfigMap ${istio}/istio-ca-root-cert not found: no CA root to verify the control plane`,
  });
  await cluster.must("POST", `/api/v1/namespaces/${istio}/configmaps`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "istio-ca-root-cert", namespace: istio },
    data: { "root-cert.pem": "-----BEGIN CERTIFICATE-----\n" },
  });
  assert.equal(await kube.caRoot(istio), "-----BEGIN CERTIFICATE-----\n");
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

test("the CLI's writes are recorded under istioctl, as istioctl's are", { skip }, async () => {
  const ns = await cluster.namespace("cli-manager");
  const created = (await kube.client.request("POST", `/api/v1/namespaces/${ns}/configmaps`, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "written", namespace: ns },
    data: { a: "1" },
  })) as { metadata: { managedFields?: { manager: string; operation: string }[] } };
  assert.deepEqual(
    created.metadata.managedFields?.map((f) => [f.manager, f.operation]),
    [["istioctl", "Update"]],
  );
});
