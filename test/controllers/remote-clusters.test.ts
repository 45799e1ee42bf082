// The multicluster secret controller against a real API server (test/cluster): a secret labelled
// istio/multiCluster=true whose key names cluster "west" and whose kubeconfig reaches the shared
// cluster makes that cluster's Services and endpoints join a real ServiceRegistry under "west"; a
// changed kubeconfig replaces the cluster, a bad one is logged (secret and key, never its text) while
// the rest keep serving, the config cluster's own ID is ignored, and removing the secret removes the
// cluster's endpoints.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import type { ConfigObject } from "../../src/config/index.ts";
import { MULTICLUSTER_SECRET_LABEL, RemoteClusters, remoteKubeConfig } from "../../src/controllers/index.ts";
import { StaticCollection } from "../../src/krt/index.ts";
import { ServiceRegistry } from "../../src/registry/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { staticInputs } from "../support/registry-inputs.ts";

const skip = clusterSkipReason();
const SYSTEM = "istio-system";

async function eventually(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!probe()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function secret(name: string, data: Record<string, string>, labelled = true): ConfigObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      namespace: SYSTEM,
      labels: labelled ? { [MULTICLUSTER_SECRET_LABEL]: "true" } : {},
    },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
  };
}

describe("RemoteClusters", { skip }, () => {
  let cluster: Cluster;
  let ns: string;
  let kubeconfig: string;
  const logs: Record<string, unknown>[] = [];
  const secrets = new StaticCollection<ConfigObject>([], {
    keyOf: (s) => `${s.metadata.namespace}/${s.metadata.name}`,
  });
  const registry = new ServiceRegistry(staticInputs(), { clusterId: "east" });
  const counts: number[] = [];
  let changes = 0;
  let remotes: RemoteClusters;
  const host = () => `echo.${ns}.svc.cluster.local`;
  const westEndpoints = () =>
    registry
      .endpointsFor(host(), 7070, ns)
      .filter((e) => e.clusterId === "west")
      .map((e) => e.address);

  const createSlice = (name: string, address: string) =>
    cluster.must("POST", `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace: ns, labels: { "kubernetes.io/service-name": "echo" } },
      addressType: "IPv4",
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports: [{ name: "grpc", port: 7070 }],
    });

  before(async () => {
    cluster = await sharedCluster();
    const label = `remote-${Date.now().toString(36)}`;
    ns = await cluster.namespace("remote-clusters", { "sluice.test/remote": label });
    kubeconfig = cluster.kubeConfig().exportConfig();
    await cluster.must("POST", `/api/v1/namespaces/${ns}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "echo", namespace: ns },
      spec: { ports: [{ name: "grpc", port: 7070 }] },
    });
    await createSlice("echo-1", "10.20.0.1");
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split("\n")) if (line) logs.push(JSON.parse(line));
        done();
      },
    });
    remotes = new RemoteClusters({
      secrets,
      namespace: SYSTEM,
      registry,
      // Only this test's namespace of the shared cluster.
      discoverySelectors: () => [{ matchLabels: { "sluice.test/remote": label } }],
      onCount: (n) => counts.push(n),
      log: pino({ level: "info" }, sink),
    });
    remotes.start(() => {
      changes += 1;
    });
  });

  after(async () => {
    remotes?.stop();
    if (ns) await cluster.deleteNamespace(ns, 0);
    await cluster?.stop();
  });

  test("a remote secret's cluster joins the registry under its key's cluster ID", async () => {
    secrets.upsert(secret("istio-remote-secret-west", { west: kubeconfig }));
    await eventually("west's endpoints", () => westEndpoints().length === 1);
    assert.deepEqual(westEndpoints(), ["10.20.0.1"]);
    assert.deepEqual(remotes.clusters(), [
      { id: "west", secretName: `${SYSTEM}/istio-remote-secret-west`, syncStatus: "synced" },
    ]);
    assert.equal(counts.at(-1), 1);
    assert.equal(changes, 1);
    // Followed: a new endpoint in the remote cluster reaches the registry.
    await createSlice("echo-2", "10.20.0.2");
    await eventually("west's second endpoint", () => westEndpoints().length === 2);
  });

  test("a bad kubeconfig is logged by secret and key, never its text; the config cluster's ID is ignored", async () => {
    const credential = "token-that-must-not-be-logged";
    secrets.upsert(
      secret("istio-remote-secret-west", {
        west: kubeconfig,
        broken: `users: [{name: x, user: {token: ${credential}}}]\n: [`,
        east: kubeconfig,
      }),
    );
    await eventually("the bad key's error", () => logs.some((l) => l.cluster === "broken"));
    const error = logs.find((l) => l.cluster === "broken");
    assert.equal(error?.secret, `${SYSTEM}/istio-remote-secret-west`);
    assert.equal(error?.msg, "remote secret skipped: its kubeconfig does not load");
    assert.ok(
      logs.some((l) => l.cluster === "east" && /config cluster's own/.test(String(l.msg))),
      "the config cluster's own ID is ignored",
    );
    assert.ok(!JSON.stringify(logs).includes(credential), "no kubeconfig text in the logs");
    assert.ok(!JSON.stringify(logs).includes(kubeconfig.slice(0, 200)), "no kubeconfig text in the logs");
    // West's kubeconfig did not change: it keeps serving, not restarted.
    assert.deepEqual(westEndpoints(), ["10.20.0.1", "10.20.0.2"]);
    assert.equal(changes, 1);
  });

  test("a changed kubeconfig replaces the cluster; removing the secret removes its endpoints", async () => {
    secrets.upsert(secret("istio-remote-secret-west", { west: `# rotated\n${kubeconfig}` }));
    await eventually("west replaced", () => changes === 2);
    assert.deepEqual(westEndpoints(), ["10.20.0.1", "10.20.0.2"]);
    // The label gone is the secret gone.
    secrets.upsert(secret("istio-remote-secret-west", { west: kubeconfig }, false));
    assert.deepEqual(westEndpoints(), []);
    assert.equal(registry.service(host(), ns), undefined);
    assert.deepEqual(remotes.clusters(), []);
    assert.equal(counts.at(-1), 0);
    assert.equal(changes, 3);
    assert.ok(logs.some((l) => l.cluster === "west" && l.msg === "remote cluster removed"));
  });
});

describe("remoteKubeConfig", () => {
  const base = (user: string) =>
    [
      "apiVersion: v1",
      "clusters: [{name: c, cluster: {server: 'https://10.0.0.1:6443'}}]",
      "contexts: [{name: c, context: {cluster: c, user: c}}]",
      "current-context: c",
      `users: [{name: c, user: ${user}}]`,
    ].join("\n");

  test("takes a bearer-token kubeconfig", () => {
    const config = remoteKubeConfig(base("{token: abc}"));
    assert.ok(!(config instanceof Error), String(config));
    assert.equal(config.getCurrentCluster()?.server, "https://10.0.0.1:6443");
  });

  test("refuses what would read local files or run programs, and says why without quoting the text", () => {
    const reasons = [
      base("{exec: {command: /bin/sh}}"),
      base("{client-key: /etc/key}"),
      base("{tokenFile: /var/run/token}"),
      base("{auth-provider: {name: gcp}}"),
      "current-context: c\ncontexts: []",
      "secret-token: [",
    ].map((text) => (remoteKubeConfig(text) as Error).message);
    assert.deepEqual(reasons, [
      "user c: exec is not allowed",
      "user c: client-key is not allowed",
      "user c: tokenFile is not allowed",
      "user c: auth provider gcp is not allowed",
      "current-context c is not among its contexts",
      "not YAML",
    ]);
  });
});
