// KubeClient against a real kube-apiserver (test/cluster): kubeconfig loading with a bearer token the
// server actually authenticates, and the server's Status answers as KubeApiError.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { type Cluster, clusterSkipReason, sharedCluster } from "../../../test/cluster/index.ts";
import { SLUICE_VERSION } from "../../util/version.ts";
import { ISTIOCTL_USER_AGENT, KubeApiError, KubeClient, loadKubeConfig, PILOT_DISCOVERY_USER_AGENT } from "./client.ts";

// Without etcd and kube-apiserver built (`npm run peers`) the tests skip; on CI that throws.
const skip = clusterSkipReason();

describe("KubeClient (real kube-apiserver)", { skip }, () => {
  let cluster: Cluster;
  let dir: string;
  before(async () => {
    cluster = await sharedCluster();
    dir = mkdtempSync(join(tmpdir(), "sluice-kubeconfig-"));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("a --kubeconfig file gives the server address, its CA and the bearer token", async () => {
    const ns = await cluster.namespace("client-token");
    await cluster.must("POST", `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: "sluice" } });
    const issued = await cluster.must("POST", `/api/v1/namespaces/${ns}/serviceaccounts/sluice/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { expirationSeconds: 600 },
    });
    const token = issued.body.status.token as string;
    assert.ok(token, "a ServiceAccount token");
    const path = join(dir, "config");
    writeFileSync(
      path,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        `- name: test\n  cluster:\n    server: ${cluster.url}\n    certificate-authority-data: ${Buffer.from(cluster.pki.caPem).toString("base64")}`,
        "users:",
        `- name: sluice\n  user:\n    token: ${token}`,
        "contexts:",
        "- name: test\n  context:\n    cluster: test\n    user: sluice",
        "current-context: test",
      ].join("\n"),
    );
    const client = new KubeClient(loadKubeConfig(path));
    const versions = (await client.request("GET", "/api")) as { versions: string[] };
    assert.deepEqual(versions.versions, ["v1"]);
    // The server saw the bearer token: it knows us as the ServiceAccount (not anonymous, not the admin).
    const review = (await client.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
      apiVersion: "authentication.k8s.io/v1",
      kind: "SelfSubjectReview",
    })) as { status: { userInfo: { username: string } } };
    assert.equal(review.status.userInfo.username, `system:serviceaccount:${ns}:sluice`);
    // ... and RBAC holds it to what it was granted (nothing).
    await assert.rejects(
      client.request("GET", `/api/v1/namespaces/${ns}/services`),
      (err: unknown) => err instanceof KubeApiError && err.code === 403 && err.reason === "Forbidden",
    );
  });

  test("a non-2xx answer is a KubeApiError with the Status reason", async () => {
    const ns = await cluster.namespace("client-errors");
    const client = new KubeClient(cluster.kubeConfig());
    await assert.rejects(
      client.request("GET", `/api/v1/namespaces/${ns}/services/missing`),
      (err: unknown) =>
        err instanceof KubeApiError && err.code === 404 && err.reason === "NotFound" && /missing/.test(err.message),
    );
    // A group the server does not serve answers a plain-text "404 page not found", not a Status.
    await assert.rejects(
      client.request("GET", "/apis/not-served.sluice.test/v1/things"),
      (err: unknown) => err instanceof KubeApiError && err.code === 404 && /not found/.test(err.message),
    );
    const configMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cm", namespace: ns } };
    const created = (await client.request("POST", `/api/v1/namespaces/${ns}/configmaps`, configMap)) as {
      metadata: { resourceVersion: string };
    };
    await assert.rejects(
      client.request("POST", `/api/v1/namespaces/${ns}/configmaps`, configMap),
      (err: unknown) => err instanceof KubeApiError && err.code === 409 && err.reason === "AlreadyExists",
    );
    // A merge patch moves the resourceVersion on; an update from the older one is a Conflict.
    await client.patch(`/api/v1/namespaces/${ns}/configmaps/cm`, { data: { a: "1" } }, "application/merge-patch+json");
    await assert.rejects(
      client.request("PUT", `/api/v1/namespaces/${ns}/configmaps/cm`, { ...configMap, metadata: created.metadata }),
      (err: unknown) => err instanceof KubeApiError && err.code === 409 && err.reason === "Conflict",
    );
    // A body the server refuses (a name that is not a DNS subdomain) is Invalid.
    await assert.rejects(
      client.request("POST", `/api/v1/namespaces/${ns}/configmaps`, {
        ...configMap,
        metadata: { name: "Not_Valid", namespace: ns },
      }),
      (err: unknown) => err instanceof KubeApiError && err.code === 422 && err.reason === "Invalid",
    );
  });

  test("writes are recorded under the user agent's command: pilot-discovery, or istioctl for the CLI", async () => {
    const ns = await cluster.namespace("client-managers");
    const sluiced = new KubeClient(cluster.kubeConfig());
    const cli = new KubeClient(cluster.kubeConfig(), { userAgent: ISTIOCTL_USER_AGENT });
    type Managed = { metadata: { managedFields?: { manager: string; operation: string; subresource?: string }[] } };
    // In the order of their managers (the server keeps its own).
    const writers = (o: unknown) =>
      ((o as Managed).metadata.managedFields ?? [])
        .map((f) => [f.manager, f.operation, f.subresource ?? ""])
        .sort((a, b) => a.join(" ").localeCompare(b.join(" ")));
    const path = `/api/v1/namespaces/${ns}/services`;
    const service = { apiVersion: "v1", kind: "Service", metadata: { name: "web", namespace: ns } };
    const spec = { type: "LoadBalancer", ports: [{ port: 80 }] };
    // A create (POST) as istiod's: the API server takes the manager from the User-Agent.
    const created = await sluiced.request("POST", path, { ...service, spec });
    assert.deepEqual(writers(created), [["pilot-discovery", "Update", ""]]);
    // A merge patch as istioctl's, then an update of the status subresource (PUT) as istiod's.
    const patched = await cli.patch(
      `${path}/web`,
      { metadata: { labels: { a: "b" } } },
      "application/merge-patch+json",
    );
    assert.deepEqual(writers(patched), [
      ["istioctl", "Update", ""],
      ["pilot-discovery", "Update", ""],
    ]);
    const status = { loadBalancer: { ingress: [{ ip: "192.0.2.1" }] } };
    const updated = await sluiced.request("PUT", `${path}/web/status`, { ...(patched as object), status });
    assert.deepEqual(writers(updated), [
      ["istioctl", "Update", ""],
      ["pilot-discovery", "Update", ""],
      ["pilot-discovery", "Update", "status"],
    ]);
    // A fieldManager the request names wins over the user agent's (server-side applies name theirs).
    const named = await sluiced.request("POST", `/api/v1/namespaces/${ns}/configmaps?fieldManager=named`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "named", namespace: ns },
      data: { a: "1" },
    });
    assert.deepEqual(writers(named), [["named", "Update", ""]]);
  });

  test("requests share one kept-alive connection instead of a TLS handshake each", async () => {
    // A TCP forwarder in front of the API server counts the connections opened through it.
    let connections = 0;
    const target = new URL(cluster.url);
    const sockets: Socket[] = [];
    const forwarder = createServer((inbound) => {
      connections++;
      const outbound = connect(Number(target.port), target.hostname);
      sockets.push(inbound, outbound);
      inbound.pipe(outbound).pipe(inbound);
      inbound.on("error", () => outbound.destroy());
      outbound.on("error", () => inbound.destroy());
    });
    await new Promise<void>((resolve) => forwarder.listen(0, "127.0.0.1", resolve));
    try {
      const kubeConfig = cluster.kubeConfig();
      const { port } = forwarder.address() as { port: number };
      const current = kubeConfig.getCurrentCluster();
      assert.ok(current);
      kubeConfig.clusters = kubeConfig.clusters.map((c) =>
        c.name === current.name ? { ...c, server: `https://127.0.0.1:${port}` } : c,
      );
      const client = new KubeClient(kubeConfig);
      for (let i = 0; i < 4; i++) {
        const versions = (await client.request("GET", "/api")) as { versions: string[] };
        assert.deepEqual(versions.versions, ["v1"]);
      }
      assert.equal(connections, 1, "four requests in turn, one connection");
    } finally {
      // The client keeps its connection for the next request; the forwarder's ends would hold the test open.
      for (const socket of sockets) socket.destroy();
      forwarder.close();
    }
  });
});

test("every request and watch carries the client's User-Agent", async () => {
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  const server = createHttpServer((req, res) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(req.url?.includes("watch=true") ? "" : "{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as { port: number };
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: "local", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: "nobody" }],
      contexts: [{ name: "local", cluster: "local", user: "nobody" }],
      currentContext: "local",
    });
    const agents = [];
    for (const client of [new KubeClient(kubeConfig), new KubeClient(kubeConfig, { userAgent: ISTIOCTL_USER_AGENT })]) {
      await client.request("POST", "/api/v1/namespaces/ns/configmaps", {});
      await client.patch("/api/v1/namespaces/ns/configmaps/cm", {}, "application/merge-patch+json");
      await (await client.watch("/api/v1/namespaces/ns/configmaps", {}, () => {})).ended;
      agents.push(seen.splice(0).map((r) => [r.url.split("?")[0], r.headers["user-agent"]]));
    }
    const requests = (ua: string) => [
      ["/api/v1/namespaces/ns/configmaps", ua],
      ["/api/v1/namespaces/ns/configmaps/cm", ua],
      ["/api/v1/namespaces/ns/configmaps", ua],
    ];
    assert.deepEqual(agents, [requests(PILOT_DISCOVERY_USER_AGENT), requests(ISTIOCTL_USER_AGENT)]);
    // As Istio's IstioUserAgent: `<command>/<version>`, the command being what the API server records.
    assert.equal(PILOT_DISCOVERY_USER_AGENT, `pilot-discovery/${SLUICE_VERSION} (sluice)`);
    assert.equal(ISTIOCTL_USER_AGENT, `istioctl/${SLUICE_VERSION} (sluice)`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
