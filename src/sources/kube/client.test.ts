// KubeClient against a real kube-apiserver (test/cluster): kubeconfig loading with a bearer token the
// server actually authenticates, and the server's Status answers as KubeApiError.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type Cluster, clusterSkipReason, sharedCluster } from "../../../test/cluster/index.ts";
import { KubeApiError, KubeClient, loadKubeConfig } from "./client.ts";

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
