// The multicluster secret controller against a real API server (test/cluster): a secret labelled
// istio/multiCluster=true whose key names cluster "west" and whose kubeconfig reaches the shared
// cluster makes that cluster's Services and endpoints join a real ServiceRegistry under "west"; a
// changed kubeconfig replaces the cluster, a bad one is logged (secret and key, never its text) while
// the rest keep serving, the config cluster's own ID is ignored, and removing the secret removes the
// cluster's endpoints. The controller has synced once every cluster has listed or outlived the sync
// timeout (an unreachable one; with no timeout it is waited for until its secret goes). With a
// whileServing hook, istiod's remote namespace controller runs beside a serving cluster: it leads there
// only when the cluster's system namespace names this control plane's cluster, holds its Lease with
// the remote holder key and publishes the roots into the namespaces the discoverySelectors select.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { stringify } from "yaml";
import type { ConfigObject } from "../../src/config/index.ts";
import { kindKey } from "../../src/config/index.ts";
import {
  CONTROL_PLANE_CLUSTERS_ANNOTATION,
  LEASE_HOLDER_KEY,
  MULTICLUSTER_SECRET_LABEL,
  RemoteClusters,
  RemoteNamespaceController,
  ROOT_CERT_CONFIGMAP,
  ROOT_CERT_KEY,
  remoteKubeConfig,
} from "../../src/controllers/index.ts";
import {
  applyObjects,
  type KubeObject,
  loadValues,
  READER_SERVICE_ACCOUNT,
  renderRemoteReader,
  Values,
} from "../../src/install/index.ts";
import { StaticCollection } from "../../src/krt/index.ts";
import { ServiceRegistry } from "../../src/registry/index.ts";
import { KubeClient } from "../../src/sources/kube/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { staticInputs } from "../support/registry-inputs.ts";
import { UNREACHABLE_KUBECONFIG } from "../support/unreachable-kubeconfig.ts";
import { waitFor } from "../support/xds-fixtures.ts";

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

describe("RemoteClusters' sync (PILOT_REMOTE_CLUSTER_TIMEOUT)", { skip }, () => {
  let cluster: Cluster;
  let kubeconfig: string;
  let label: string;
  const quiet = pino({ level: "silent" });
  const started: RemoteClusters[] = [];
  const make = (secrets: ConfigObject[], syncTimeoutMs: number, timeouts: string[] = []) => {
    const collection = new StaticCollection<ConfigObject>(secrets, {
      keyOf: (s) => `${s.metadata.namespace}/${s.metadata.name}`,
    });
    const remotes = new RemoteClusters({
      secrets: collection,
      namespace: SYSTEM,
      registry: new ServiceRegistry(staticInputs(), { clusterId: "east" }),
      discoverySelectors: () => [{ matchLabels: { "sluice.test/remote-sync": label } }],
      syncTimeoutMs,
      onSyncTimeout: (id) => timeouts.push(id),
      log: quiet,
    });
    started.push(remotes);
    return { remotes, collection };
  };

  before(async () => {
    cluster = await sharedCluster();
    label = `sync-${Date.now().toString(36)}`;
    kubeconfig = cluster.kubeConfig().exportConfig();
  });

  after(async () => {
    for (const remotes of started) remotes.stop();
    await cluster?.stop();
  });

  test("with no remote secret it has synced once started", () => {
    const { remotes } = make([], 30_000);
    assert.equal(remotes.hasSynced(), false, "not before the secrets are read");
    remotes.start(() => {});
    assert.equal(remotes.hasSynced(), true);
  });

  test("waits for the clusters of the secrets there at start, an unreachable one up to the timeout", async () => {
    const timeouts: string[] = [];
    const { remotes } = make(
      [
        secret("istio-remote-secret-west", { west: kubeconfig }),
        secret("istio-remote-secret-dead", { dead: UNREACHABLE_KUBECONFIG }),
      ],
      1500,
      timeouts,
    );
    const t0 = Date.now();
    remotes.start(() => {});
    assert.equal(remotes.hasSynced(), false);
    await eventually("west listed", () => remotes.clusters().some((c) => c.id === "west" && c.syncStatus === "synced"));
    assert.equal(remotes.hasSynced(), false, "the unreachable cluster is still waited for");
    await remotes.whenSynced();
    const waited = Date.now() - t0;
    assert.ok(waited >= 1400, `synced after ${waited} ms, before the timeout`);
    assert.ok(waited < 10_000, `synced after ${waited} ms`);
    assert.equal(remotes.hasSynced(), true);
    assert.deepEqual(timeouts, ["dead"]);
    assert.deepEqual(
      remotes.clusters().map((c) => [c.id, c.syncStatus]),
      [
        ["dead", "timeout"],
        ["west", "synced"],
      ],
    );
  });

  test("a timeout of 0 waits without limit, until the cluster's secret goes", async () => {
    const timeouts: string[] = [];
    const { remotes, collection } = make(
      [secret("istio-remote-secret-dead", { dead: UNREACHABLE_KUBECONFIG })],
      0,
      timeouts,
    );
    remotes.start(() => {});
    let synced = false;
    void remotes.whenSynced().then(() => {
      synced = true;
    });
    await sleep(2000);
    assert.equal(synced, false);
    assert.equal(remotes.hasSynced(), false);
    assert.deepEqual(remotes.clusters(), [
      { id: "dead", secretName: `${SYSTEM}/istio-remote-secret-dead`, syncStatus: "syncing" },
    ]);
    collection.delete(`${SYSTEM}/istio-remote-secret-dead`);
    await eventually("synced once the cluster is gone", () => synced);
    assert.deepEqual(timeouts, []);
  });
});

describe("RemoteClusters: a remote cluster's own trust domain (its mesh ConfigMap)", { skip }, () => {
  let cluster: Cluster;
  let system: string;
  let ns: string;
  let remotes: RemoteClusters;
  let changes = 0;
  const registry = new ServiceRegistry(staticInputs(), { clusterId: "east", mesh: { trustDomain: "east.example" } });
  const identities = () => registry.service(`echo.${ns}.svc.cluster.local`, ns)?.serviceAccounts ?? [];
  const meshConfigMap = (mesh: string) => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "istio", namespace: system },
    data: { mesh },
  });

  before(async () => {
    cluster = await sharedCluster();
    const label = `remote-td-${Date.now().toString(36)}`;
    system = await cluster.namespace("remote-td-system");
    ns = await cluster.namespace("remote-td", { "sluice.test/remote-td": label });
    await cluster.must("POST", `/api/v1/namespaces/${ns}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "echo", namespace: ns, annotations: { "alpha.istio.io/kubernetes-serviceaccounts": "echo" } },
      spec: { ports: [{ name: "grpc", port: 7070 }] },
    });
    remotes = new RemoteClusters({
      secrets: new StaticCollection<ConfigObject>(
        [
          {
            ...secret("istio-remote-secret-west", { west: cluster.kubeConfig().exportConfig() }),
            metadata: {
              name: "istio-remote-secret-west",
              namespace: system,
              labels: { [MULTICLUSTER_SECRET_LABEL]: "true" },
            },
          },
        ],
        { keyOf: (s) => `${s.metadata.namespace}/${s.metadata.name}` },
      ),
      namespace: system,
      registry,
      discoverySelectors: () => [{ matchLabels: { "sluice.test/remote-td": label } }],
      log: pino({ level: "silent" }),
    });
    remotes.start(() => {
      changes += 1;
    });
  });

  after(async () => {
    remotes?.stop();
    for (const each of [ns, system]) if (each) await cluster.deleteNamespace(each, 0);
    await cluster?.stop();
  });

  const identity = (trustDomain: string) => `spiffe://${trustDomain}/ns/${ns}/sa/echo`;

  test("without its mesh ConfigMap, Istio's default trust domain", async () => {
    await eventually("west's Service in cluster.local", () => identities()[0] === identity("cluster.local"));
  });

  test("its mesh config's trust domain, followed as it changes, each change pushed", async () => {
    const before = changes;
    await cluster.must("POST", `/api/v1/namespaces/${system}/configmaps`, meshConfigMap("trustDomain: west.example\n"));
    await eventually("west.example", () => identities()[0] === identity("west.example"));
    assert.equal(changes, before + 1);
    // A mesh config that does not parse keeps the last trust domain.
    await cluster.must("PUT", `/api/v1/namespaces/${system}/configmaps/istio`, meshConfigMap("trustDomain: [west\n"));
    await sleep(500);
    assert.deepEqual(identities(), [identity("west.example")]);
    // An empty trust domain does not validate (as istiod's): kept too.
    await cluster.must("PUT", `/api/v1/namespaces/${system}/configmaps/istio`, meshConfigMap('trustDomain: ""\n'));
    await sleep(500);
    assert.deepEqual(identities(), [identity("west.example")]);
    // Gone: Istio's default again.
    await cluster.must("DELETE", `/api/v1/namespaces/${system}/configmaps/istio`);
    await eventually("cluster.local", () => identities()[0] === identity("cluster.local"));
    assert.equal(changes, before + 2);
  });
});

/** A kubeconfig of `cluster`'s API server with a bearer token, as a remote secret carries. */
function tokenKubeconfig(cluster: Cluster, token: string): string {
  const current = cluster.kubeConfig().getCurrentCluster();
  assert.ok(current);
  const ca = current.caData ?? (current.caFile ? readFileSync(current.caFile).toString("base64") : undefined);
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "west", cluster: { server: current.server, "certificate-authority-data": ca } }],
    contexts: [{ name: "west", context: { cluster: "west", user: "reader" } }],
    "current-context": "west",
    users: [{ name: "reader", user: { token } }],
  });
}

describe("RemoteNamespaceController, beside a serving remote cluster", { skip }, () => {
  let cluster: Cluster;
  let client: KubeClient;
  let system: string;
  let selected: string;
  let unselected: string;
  let root = "-----BEGIN CERTIFICATE-----\nremote root one\n-----END CERTIFICATE-----\n";
  const rootListeners = new Set<() => void>();
  const controllers: RemoteNamespaceController[] = [];
  let remotes: RemoteClusters;
  let reader: KubeObject[] = [];
  let readerKubeconfig: string;
  const secrets = new StaticCollection<ConfigObject>([], {
    keyOf: (s) => `${s.metadata.namespace}/${s.metadata.name}`,
  });
  const configMap = async (ns: string) => {
    const res = await cluster.request("GET", `/api/v1/namespaces/${ns}/configmaps/${ROOT_CERT_CONFIGMAP}`);
    return res.status === 404 ? undefined : (res.body as { data?: Record<string, string> });
  };
  const lease = async () => {
    const res = await cluster.request(
      "GET",
      `/apis/coordination.k8s.io/v1/namespaces/${system}/leases/istio-namespace-controller-election`,
    );
    return res.status === 404
      ? undefined
      : (res.body as { metadata: { annotations?: Record<string, string> }; spec: { holderIdentity?: string } });
  };
  /** The system namespace, made with the annotation naming the control planes' clusters (none: unannotated). */
  const makeSystem = async (controlPlaneClusters?: string) => {
    const name = `remote-system-${Date.now().toString(36)}`;
    await cluster.must("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name,
        labels: { "sluice.test/cluster": "true" },
        ...(controlPlaneClusters ? { annotations: { [CONTROL_PLANE_CLUSTERS_ANNOTATION]: controlPlaneClusters } } : {}),
      },
    });
    return name;
  };

  before(async () => {
    cluster = await sharedCluster();
    client = new KubeClient(cluster.kubeConfig());
    const label = `remote-ns-${Date.now().toString(36)}`;
    selected = await cluster.namespace("remote-ns-a", { "sluice.test/remote-ns": label });
    unselected = await cluster.namespace("remote-ns-none");
    system = await makeSystem("north,east");
    // West is read as the remote-secret reader, with the RBAC `sluice install` renders for a cluster led
    // from outside (istiodRemote.enabled): what the controller does there, that ServiceAccount may do.
    reader = renderRemoteReader(
      new Values(loadValues([], ["istiodRemote.enabled=true", `global.istioNamespace=${system}`])),
    );
    await applyObjects(client, reader);
    const token = await cluster.must(
      "POST",
      `/api/v1/namespaces/${system}/serviceaccounts/${READER_SERVICE_ACCOUNT}/token`,
      { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
    );
    readerKubeconfig = tokenKubeconfig(cluster, token.body.status.token as string);
    remotes = new RemoteClusters({
      secrets,
      namespace: system,
      registry: new ServiceRegistry(staticInputs(), { clusterId: "east" }),
      discoverySelectors: () => [{ matchLabels: { "sluice.test/remote-ns": label } }],
      whileServing: (serving) => {
        const controller = new RemoteNamespaceController({
          clusterId: serving.id,
          client: new KubeClient(serving.kubeConfig),
          namespaces: serving.store.collection(kindKey("", "Namespace")),
          systemNamespace: system,
          configClusterId: "east",
          identity: "istiod-east-1",
          revision: "default",
          leaderElection: true,
          rootCert: () => root,
          onRootCertChange: (listener) => {
            rootListeners.add(listener);
            return () => rootListeners.delete(listener);
          },
        });
        controller.start();
        controllers.push(controller);
        return controller;
      },
      log: pino({ level: "silent" }),
    });
    remotes.start(() => {});
  });

  after(async () => {
    remotes?.stop();
    for (const o of reader.filter((o) => o.kind === "ClusterRole" || o.kind === "ClusterRoleBinding"))
      await cluster.request("DELETE", `/apis/rbac.authorization.k8s.io/v1/${o.kind.toLowerCase()}s/${o.metadata.name}`);
    for (const ns of [selected, unselected, system]) if (ns) await cluster.deleteNamespace(ns, 0);
    await cluster?.stop();
  });

  test("leads in a remote cluster whose system namespace names this cluster, and publishes the roots there", async () => {
    secrets.upsert({
      ...secret("istio-remote-secret-west", { west: readerKubeconfig }),
      metadata: {
        name: "istio-remote-secret-west",
        namespace: system,
        labels: { [MULTICLUSTER_SECRET_LABEL]: "true" },
      },
    });
    await eventually("west serving with its controller", () => controllers.length === 1);
    assert.equal(await controllers[0]?.decided(), true);
    await waitFor(async () => (await configMap(selected))?.data?.[ROOT_CERT_KEY] === root, "the roots published");
    const held = await lease();
    assert.equal(held?.spec.holderIdentity, "istiod-east-1");
    assert.equal(held?.metadata.annotations?.[LEASE_HOLDER_KEY], "^default");
    // discoverySelectors leave this one out.
    assert.equal(await configMap(unselected), undefined);
    // New roots reach the remote cluster's namespaces too.
    root = "-----BEGIN CERTIFICATE-----\nremote root two\n-----END CERTIFICATE-----\n";
    for (const listener of rootListeners) listener();
    await waitFor(async () => (await configMap(selected))?.data?.[ROOT_CERT_KEY] === root, "the roots published");
  });

  test("does not lead where the annotation names other clusters or is missing", async () => {
    for (const annotation of ["north,west", undefined]) {
      const other = await makeSystem(annotation);
      const controller = new RemoteNamespaceController({
        clusterId: "south",
        client,
        namespaces: new StaticCollection<ConfigObject>([]),
        systemNamespace: other,
        configClusterId: "east",
        identity: "istiod-east-1",
        revision: "default",
        leaderElection: true,
        rootCert: () => root,
        onRootCertChange: () => () => {},
      });
      controller.start();
      try {
        assert.equal(await controller.decided(), false, String(annotation));
        const res = await cluster.request(
          "GET",
          `/apis/coordination.k8s.io/v1/namespaces/${other}/leases/istio-namespace-controller-election`,
        );
        assert.equal(res.status, 404, "no Lease taken");
      } finally {
        controller.stop();
        await cluster.deleteNamespace(other, 0);
      }
    }
  });

  test("stops with its cluster: the secret gone, the Lease is released", async () => {
    secrets.delete(`${system}/istio-remote-secret-west`);
    await waitFor(async () => (await lease())?.spec.holderIdentity !== "istiod-east-1", "the Lease released");
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
