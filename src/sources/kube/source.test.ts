// KubeSource against a real etcd and kube-apiserver (test/cluster). The shared cluster serves the
// tests that disturb nobody, each in namespaces of its own; the cluster is never assumed empty, so
// every assertion looks only at the test's namespaces. Connection failures are made by a TCP proxy
// the source talks through (CutProxy, below), which can cut every connection and refuse new ones for
// a while; the real server is untouched. What disturbs the server itself (etcd compaction with the
// watch cache off, CRDs deleted, an API server restart) runs on private clusters.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { join } from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { KubeConfig } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { Cluster, clusterSkipReason, defaultCrdDir, sharedCluster } from "../../../test/cluster/index.ts";
import { type ConfigObject, KINDS, type KindInfo, kindKey, type ObjectKey } from "../../config/index.ts";
import type { ConfigWriter, SourceProblem } from "../types.ts";
import { KubeApiError, KubeSource, type KubeSourceOptions } from "./index.ts";
import { resourcePath } from "./paths.ts";

// Without etcd and kube-apiserver built (`npm run peers`) the tests skip; on CI that throws.
const skip = clusterSkipReason();

/** A ConfigWriter that keeps what a store would hold and counts every write, to catch duplicates. */
class RecordingWriter implements ConfigWriter {
  readonly objects = new Map<string, ConfigObject>();
  readonly problems = new Map<string, readonly SourceProblem[]>();
  /** How often each object was written at each resourceVersion: "kindKey ns/name@rv" → count. */
  readonly writes = new Map<string, number>();
  /** Atomic replacements (a list or relist) of each kind, by kind key. */
  readonly replacesOf = new Map<string, number>();
  /** Single-object calls (upserts, deletes, problem reports) of each kind, by kind key. */
  readonly changesOf = new Map<string, number>();
  replaces = 0;

  private changed(kind: string): void {
    this.changesOf.set(kind, (this.changesOf.get(kind) ?? 0) + 1);
  }

  upsert(_source: string, obj: ConfigObject): void {
    const key = storeKey(obj);
    this.changed(key.split(" ")[0]);
    const version = `${key}@${obj.metadata.resourceVersion}`;
    this.writes.set(version, (this.writes.get(version) ?? 0) + 1);
    this.objects.set(key, obj);
  }

  delete(_source: string, key: ObjectKey): void {
    this.changed(key.kind);
    this.objects.delete(`${key.kind} ${key.namespace}/${key.name}`);
  }

  replace(_source: string, scope: string, objects: readonly ConfigObject[]): void {
    this.replaces++;
    this.replacesOf.set(scope, (this.replacesOf.get(scope) ?? 0) + 1);
    for (const key of this.objects.keys()) if (key.startsWith(`${scope} `)) this.objects.delete(key);
    for (const obj of objects) this.objects.set(storeKey(obj), obj);
  }

  reportProblems(_source: string, scope: string, problems: readonly SourceProblem[]): void {
    this.changed(scope.split(" ")[0]);
    if (problems.length === 0) this.problems.delete(scope);
    else this.problems.set(scope, problems);
  }

  /** Names ("ns/name") of the stored objects of one kind, in one namespace or all, sorted. */
  names(kind: string, namespace?: string): string[] {
    return [...this.objects.keys()]
      .filter((k) => k.startsWith(`${kind} `))
      .map((k) => k.slice(kind.length + 1))
      .filter((n) => namespace === undefined || n.startsWith(`${namespace}/`))
      .sort();
  }

  /** Whether the store holds the Namespace `name`. */
  hasNamespace(name: string): boolean {
    return this.objects.has(`${NS} /${name}`);
  }

  duplicateWrites(): string[] {
    return [...this.writes].filter(([, count]) => count > 1).map(([version]) => version);
  }
}

function storeKey(obj: ConfigObject): string {
  const [group, kind] = obj.apiVersion.includes("/") ? [obj.apiVersion.split("/")[0], obj.kind] : ["", obj.kind];
  return `${kindKey(group, kind)} ${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
}

const VS = "networking.istio.io/VirtualService";
const SVC = "/Service";
const NS = "/Namespace";

function findKind(key: string): KindInfo {
  return KINDS.find((k) => kindKey(k.group, k.kind) === key)!;
}

function virtualService(
  namespace: string,
  name: string,
  labels: Record<string, string> = {},
  hosts = [name],
): ConfigObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name, namespace, labels },
    spec: { hosts, http: [{ route: [{ destination: { host: name } }] }] },
  };
}

/** A headless Service: the test cluster's ClusterIP range is small and shared. */
function service(namespace: string, name: string, labels: Record<string, string> = {}): ConfigObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, labels },
    spec: { clusterIP: "None", ports: [{ port: 80 }] },
  };
}

const hostsOf = (obj: ConfigObject | undefined) => (obj?.spec as { hosts?: string[] } | undefined)?.hosts?.join();

/** Waits (bounded) for a condition that some asynchronous delivery makes true. */
async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await sleep(20);
  assert.ok(condition(), `timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** `promise`, or a failure naming `what` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Objects in a cluster, through its admin connection (never through a test's proxy). */
class Objects {
  constructor(private readonly cluster: Cluster) {}

  private path(obj: ConfigObject, named: boolean): string {
    const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/") : ["", obj.apiVersion];
    const kind = KINDS.find((k) => k.group === group && k.kind === obj.kind)!;
    return resourcePath({
      kind,
      version,
      namespace: obj.metadata.namespace,
      name: named ? obj.metadata.name : undefined,
    });
  }

  async create(obj: ConfigObject): Promise<ConfigObject> {
    return (await this.cluster.must("POST", this.path(obj, false), obj)).body;
  }

  async get(obj: ConfigObject): Promise<ConfigObject> {
    return (await this.cluster.must("GET", this.path(obj, true))).body;
  }

  /** Replaces the object's labels and spec (an update from its current resourceVersion). */
  async update(obj: ConfigObject): Promise<ConfigObject> {
    const current = await this.get(obj);
    const next = { ...current, metadata: { ...current.metadata, labels: obj.metadata.labels }, spec: obj.spec };
    return (await this.cluster.must("PUT", this.path(obj, true), next)).body;
  }

  async delete(obj: ConfigObject): Promise<void> {
    await this.cluster.must("DELETE", this.path(obj, true));
  }

  /** Replaces a namespace's labels (on top of the harness's own). */
  async labelNamespace(name: string, labels: Record<string, string>): Promise<void> {
    const current = (await this.cluster.must("GET", `/api/v1/namespaces/${name}`)).body as ConfigObject;
    const kept = Object.fromEntries(
      Object.entries(current.metadata.labels ?? {}).filter(
        ([k]) => k.startsWith("kubernetes.io/") || k.startsWith("sluice.test/cluster"),
      ),
    );
    await this.cluster.must("PUT", `/api/v1/namespaces/${name}`, {
      ...current,
      metadata: { ...current.metadata, labels: { ...kept, ...labels } },
    });
  }
}

/**
 * A TCP proxy in front of an API server, for network failures: `cut()` drops every connection
 * through it (open watches end mid-stream), `hold()` also refuses new ones until `release()`.
 * TLS passes through untouched (the serving certificate names 127.0.0.1, whatever the port).
 */
class CutProxy {
  private readonly sockets = new Set<Socket>();
  private holding = false;
  /** Connections refused while held. */
  refused = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<CutProxy> {
    const { hostname, port } = new URL(target);
    const server = createServer();
    await new Promise<void>((ok, fail) => server.listen(0, "127.0.0.1", ok).once("error", fail));
    const proxy = new CutProxy(server, `https://127.0.0.1:${(server.address() as { port: number }).port}`);
    server.on("connection", (client) => proxy.accept(client, hostname, Number(port)));
    return proxy;
  }

  private accept(client: Socket, host: string, port: number): void {
    if (this.holding) {
      this.refused++;
      client.destroy();
      return;
    }
    const upstream = tcpConnect(port, host);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ]) {
      this.sockets.add(a);
      a.on("error", () => {});
      a.on("close", () => {
        this.sockets.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  }

  /** A copy of `kubeConfig` whose cluster is reached through this proxy. */
  kubeConfig(kubeConfig: KubeConfig): KubeConfig {
    const proxied = new KubeConfig();
    proxied.loadFromOptions({
      clusters: kubeConfig.clusters.map((c) => ({ ...c, server: this.url })),
      users: kubeConfig.users,
      contexts: kubeConfig.contexts,
      currentContext: kubeConfig.currentContext,
    });
    return proxied;
  }

  cut(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  hold(): void {
    this.holding = true;
    this.cut();
  }

  release(): void {
    this.holding = false;
  }

  async close(): Promise<void> {
    this.hold();
    await new Promise((ok) => this.server.close(ok));
  }
}

/** The VirtualService CRD from the CRD folder. */
function virtualServiceCrd(): {
  metadata: { name: string };
  spec: { versions: { name: string; served: boolean; storage: boolean }[] };
} {
  const text = readFileSync(join(defaultCrdDir(), "istio-crds.yaml"), "utf8");
  for (const doc of parseAllDocuments(text)) {
    const obj = doc.toJS();
    if (obj?.kind === "CustomResourceDefinition" && obj.metadata.name === "virtualservices.networking.istio.io") {
      return obj;
    }
  }
  throw new Error("no VirtualService CRD in istio-crds.yaml");
}

/** Sources started by a test, stopped after it. */
const running = new Set<KubeSource>();

async function startSource(
  kubeConfig: KubeConfig,
  writer: ConfigWriter,
  kinds: string[],
  options: Partial<KubeSourceOptions> = {},
): Promise<KubeSource> {
  const source = new KubeSource({
    kubeConfig,
    writer,
    kinds: kinds.map(findKind),
    backoff: { initialMs: 5, maxMs: 50 },
    notInstalledRetryMs: 50,
    ...options,
  });
  running.add(source);
  await within(source.start(), 45_000, "KubeSource.start() (every kind listed, or found not served)");
  return source;
}

afterEach(() => {
  for (const source of running) source.stop();
  running.clear();
});

describe("KubeSource (shared cluster)", { skip, timeout: 180_000 }, () => {
  let cluster: Cluster;
  let objects: Objects;
  let proxy: CutProxy;
  let writer: RecordingWriter;
  let source: KubeSource;

  /** A source on the shared cluster (through the proxy) watching Namespaces, Services and VirtualServices. */
  async function start(options: Partial<KubeSourceOptions> = {}): Promise<KubeSource> {
    writer = new RecordingWriter();
    source = await startSource(proxy.kubeConfig(cluster.kubeConfig()), writer, [NS, SVC, VS], options);
    return source;
  }

  before(async () => {
    cluster = await sharedCluster();
    objects = new Objects(cluster);
    proxy = await CutProxy.start(cluster.url);
    await startBookmarkWatcher(cluster);
  });
  after(() => proxy?.close());
  afterEach(() => proxy?.release());

  test("the initial list feeds the writer; adds, updates and deletes follow", async () => {
    const ns = await cluster.namespace("list-watch");
    await objects.create(virtualService(ns, "first"));
    await objects.create(service(ns, "web"));
    await start();
    // One atomic replace per kind for the initial list.
    assert.equal(writer.replaces, 3);
    assert.deepEqual(writer.names(VS, ns), [`${ns}/first`]);
    assert.deepEqual(writer.names(SVC, ns), [`${ns}/web`]);
    assert.ok(writer.hasNamespace(ns), "its namespace");
    assert.ok(Object.isFrozen(writer.objects.get(`${VS} ${ns}/first`)), "objects handed to the store are frozen");
    // Built-in kinds' list items carry no apiVersion and kind: the source puts them back.
    assert.equal(writer.objects.get(`${SVC} ${ns}/web`)?.apiVersion, "v1");
    assert.equal(writer.objects.get(`${SVC} ${ns}/web`)?.kind, "Service");

    await objects.create(virtualService(ns, "second"));
    const updated = await objects.update(virtualService(ns, "first", {}, ["first", "first.example"]));
    await objects.delete(service(ns, "web"));
    await until(() => writer.names(SVC, ns).length === 0, "the Service's delete");
    await until(() => writer.names(VS, ns).length === 2, "the second VirtualService");
    await until(
      () => writer.objects.get(`${VS} ${ns}/first`)?.metadata.resourceVersion === updated.metadata.resourceVersion,
      "the update",
    );
    assert.equal(hostsOf(writer.objects.get(`${VS} ${ns}/first`)), "first,first.example");
    assert.equal(writer.objects.get(`${VS} ${ns}/first`)?.apiVersion, "networking.istio.io/v1");
    // Each kind's resume point is a resourceVersion the server handed out (etcd's revision).
    for (const [kind, rv] of source.resourceVersions()) assert.match(rv, /^\d+$/, `${kind} resourceVersion`);
    assert.ok(Number(source.resourceVersions().get(VS)) >= Number(updated.metadata.resourceVersion));
    assert.equal(writer.replaces, 3, "no relist");
    assert.deepEqual(writer.duplicateWrites(), []);
  });

  test("a list comes in pages, all of one snapshot, and its objects are kept stripped", async () => {
    const ns = await cluster.namespace("pages");
    for (const name of ["a", "b", "c", "d", "e"]) await objects.create(virtualService(ns, name));
    // Five of this namespace, and whatever other tests left: several pages of two.
    await start({ listPageSize: 2 });
    assert.deepEqual(
      writer.names(VS, ns),
      ["a", "b", "c", "d", "e"].map((n) => `${ns}/${n}`),
    );
    assert.equal(writer.replacesOf.get(VS), 1, "one replacement after the last page");
    const held = writer.objects.get(`${VS} ${ns}/a`);
    assert.equal(held?.apiVersion, "networking.istio.io/v1");
    assert.equal(held?.metadata.managedFields, undefined, "managedFields are never kept");
    await objects.create(virtualService(ns, "f"));
    await until(() => writer.names(VS, ns).length === 6, "the watch from the list's resourceVersion");
    assert.equal(writer.objects.get(`${VS} ${ns}/f`)?.metadata.managedFields, undefined);
    assert.deepEqual(writer.duplicateWrites(), []);
  });

  test("a watch dropped mid-stream resumes from its resourceVersion: changes in the gap arrive once", async () => {
    const ns = await cluster.namespace("resume");
    await objects.create(virtualService(ns, "keep"));
    await objects.create(virtualService(ns, "gone"));
    await start();
    // An event proves the watch is open before it is cut.
    await objects.create(virtualService(ns, "before-cut"));
    await until(() => writer.names(VS, ns).includes(`${ns}/before-cut`), "a watch event");
    const replaces = writer.replaces;

    proxy.hold();
    // Made while the source cannot reach the server: all of this happens in the gap.
    await objects.create(virtualService(ns, "new"));
    await objects.update(virtualService(ns, "keep", {}, ["keep", "kept"]));
    await objects.delete(virtualService(ns, "gone"));
    // Some reconnects are refused first, so the source really was cut off.
    await until(() => proxy.refused >= 3, "reconnect attempts while held");
    proxy.release();

    await until(
      () => writer.names(VS, ns).join() === `${ns}/before-cut,${ns}/keep,${ns}/new`,
      "the gap's create and delete",
    );
    await until(() => hostsOf(writer.objects.get(`${VS} ${ns}/keep`)) === "keep,kept", "the gap's update");
    assert.equal(writer.replaces, replaces, "resumed from the resourceVersion, without a relist");
    assert.deepEqual(writer.duplicateWrites(), []);
  });

  test("a watch cut in the middle of a burst of events loses nothing and repeats nothing", async () => {
    const ns = await cluster.namespace("burst");
    await start();
    const names = Array.from({ length: 40 }, (_, i) => `vs-${String(i).padStart(2, "0")}`);
    // Half go to the open watch, which is cut as soon as the first arrives (the others may be in
    // flight); the second half are made in the gap.
    await Promise.all(names.slice(0, 20).map((name) => objects.create(virtualService(ns, name))));
    await until(() => writer.names(VS, ns).length > 0, "the first of the burst");
    proxy.hold();
    await Promise.all(names.slice(20).map((name) => objects.create(virtualService(ns, name))));
    proxy.release();
    await until(() => writer.names(VS, ns).length === 40, "all forty");
    assert.deepEqual(
      writer.names(VS, ns),
      names.map((n) => `${ns}/${n}`),
    );
    assert.deepEqual(writer.duplicateWrites(), []);
  });

  test("discovery selectors: only selected namespaces; relabelling brings objects in and out", async () => {
    // Label keys of this test alone: the shared cluster may hold other tests' namespaces.
    const mesh = `sel-${Date.now().toString(36)}.sluice.test/mesh`;
    const team = `sel-${Date.now().toString(36)}.sluice.test/team`;
    const a = await cluster.namespace("sel-a", { [mesh]: "on" });
    const b = await cluster.namespace("sel-b");
    await objects.create(service(a, "in-a"));
    await objects.create(service(b, "in-b"));
    await start({
      discoverySelectors: [
        { matchLabels: { [mesh]: "on" } },
        { matchExpressions: [{ key: team, operator: "In", values: ["x"] }] },
      ],
    });
    const selected = () => [...writer.names(SVC, a), ...writer.names(SVC, b)];
    const namespaces = () => [a, b].filter((n) => writer.hasNamespace(n));
    assert.deepEqual(selected(), [`${a}/in-a`]);
    assert.deepEqual(namespaces(), [a]);

    await objects.labelNamespace(b, { [team]: "x" });
    await until(() => selected().join() === `${a}/in-a,${b}/in-b`, `${b} selected`);
    assert.deepEqual(namespaces(), [a, b]);

    await objects.labelNamespace(a, { [mesh]: "off" });
    await until(() => selected().join() === `${b}/in-b`, `${a} deselected`);
    assert.deepEqual(namespaces(), [b]);

    // Objects created in an unselected namespace stay out.
    await objects.create(service(a, "later"));
    await objects.create(service(b, "later"));
    await until(() => selected().includes(`${b}/later`), `the new Service in ${b}`);
    // The Service in a was made first, so its event came first: had it been admitted, it would be here.
    assert.ok(!selected().includes(`${a}/later`));

    // Dropping the selectors (a MeshConfig reload) selects everything, at once.
    source.setDiscoverySelectors([]);
    assert.deepEqual(selected(), [`${a}/in-a`, `${a}/later`, `${b}/in-b`, `${b}/later`]);
    assert.deepEqual(namespaces(), [a, b]);
  });

  test("revision label: config of another revision is ignored; workloads are not filtered", async () => {
    const ns = await cluster.namespace("rev");
    await objects.create(virtualService(ns, "unlabelled"));
    await objects.create(virtualService(ns, "mine", { "istio.io/rev": "canary" }));
    await objects.create(virtualService(ns, "theirs", { "istio.io/rev": "stable" }));
    await objects.create(service(ns, "svc-theirs", { "istio.io/rev": "stable" }));
    await start({ revision: "canary" });
    assert.deepEqual(writer.names(VS, ns), [`${ns}/mine`, `${ns}/unlabelled`]);
    assert.deepEqual(writer.names(SVC, ns), [`${ns}/svc-theirs`]);

    // Moving an object to another revision takes it away; moving one here brings it in.
    await objects.update(virtualService(ns, "mine", { "istio.io/rev": "stable" }));
    await until(() => writer.names(VS, ns).join() === `${ns}/unlabelled`, "relabelled away");
    await objects.update(virtualService(ns, "theirs", { "istio.io/rev": "canary" }));
    await until(() => writer.names(VS, ns).join() === `${ns}/theirs,${ns}/unlabelled`, "relabelled here");
  });

  test("an invalid object is reported and the last good version stays", async () => {
    const ns = await cluster.namespace("bad");
    // The CRD's schema lets these through; Sluice's validation does not.
    const invalid = (name: string) => ({ ...virtualService(ns, name), spec: { hosts: [] } });
    const good = await objects.create(virtualService(ns, "vs"));
    await objects.create(invalid("never-good"));
    await start();
    const scope = `${VS} ${ns}/never-good`;
    assert.ok(!writer.names(VS, ns).includes(`${ns}/never-good`));
    assert.match(writer.problems.get(scope)?.[0].message ?? "", /spec/);

    await objects.update(invalid("vs"));
    await until(() => writer.problems.has(`${VS} ${ns}/vs`), "the problem report");
    assert.equal(writer.objects.get(`${VS} ${ns}/vs`)?.metadata.resourceVersion, good.metadata.resourceVersion);

    const fixed = await objects.update(virtualService(ns, "vs"));
    await until(
      () => writer.objects.get(`${VS} ${ns}/vs`)?.metadata.resourceVersion === fixed.metadata.resourceVersion,
      "the fixed version",
    );
    assert.ok(!writer.problems.has(`${VS} ${ns}/vs`), "problems cleared once valid");

    await objects.delete(virtualService(ns, "never-good"));
    await until(() => !writer.problems.has(scope), "problems cleared on delete");
  });

  test("writeStatus updates the status subresource only; a stale object is a conflict", async () => {
    const ns = await cluster.namespace("status");
    await objects.create(virtualService(ns, "vs"));
    await start();
    const stored = writer.objects.get(`${VS} ${ns}/vs`)!;
    const status = { conditions: [{ type: "Reconciled", status: "True" }] };
    // The status subresource ignores everything but the status: a changed spec is not written.
    const written = await source.writeStatus({ ...stored, spec: { hosts: ["changed"] } }, status);
    assert.deepEqual(written.status, status);
    const inCluster = await objects.get(stored);
    assert.deepEqual(inCluster.status, status);
    assert.equal(hostsOf(inCluster), "vs", "the spec stays as it was");
    assert.equal(inCluster.metadata.generation, stored.metadata.generation, "a status write is not a new generation");
    assert.notEqual(written.metadata.resourceVersion, stored.metadata.resourceVersion);
    // The watch brings the status-only change back.
    await until(
      () => writer.objects.get(`${VS} ${ns}/vs`)?.metadata.resourceVersion === written.metadata.resourceVersion,
      "the status change through the watch",
    );
    assert.deepEqual(writer.objects.get(`${VS} ${ns}/vs`)?.status, status);

    // The old resourceVersion is a precondition the server checks.
    await assert.rejects(
      source.writeStatus(stored, {}),
      (err: unknown) => err instanceof KubeApiError && err.code === 409 && err.reason === "Conflict",
    );
    assert.deepEqual((await objects.get(stored)).status, status, "the conflicting write changed nothing");
  });

  test("failing requests (403 until RBAC allows) are retried with backoff until every kind is listed", async () => {
    const ns = await cluster.namespace("retry");
    await objects.create(service(ns, "svc"));
    await objects.create(virtualService(ns, "vs"));
    // A ServiceAccount of its own, first without any permission: every list answers 403.
    const account = "sluice-retry";
    await cluster.must("POST", `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: account } });
    const issued = await cluster.must("POST", `/api/v1/namespaces/${ns}/serviceaccounts/${account}/token`, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { expirationSeconds: 600 },
    });
    const admin = cluster.kubeConfig();
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: admin.clusters,
      users: [{ name: account, token: issued.body.status.token }],
      contexts: [{ name: account, cluster: admin.clusters[0].name, user: account }],
      currentContext: account,
    });
    writer = new RecordingWriter();
    let started = false;
    const starting = startSource(kubeConfig, writer, [NS, SVC, VS]).then((s) => {
      started = true;
      return s;
    });
    await sleep(500);
    assert.equal(started, false, "not synced while every list is forbidden");
    assert.equal(writer.replaces, 0);

    // Cluster-scoped, so named after the namespace (unique).
    await cluster.must("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      metadata: { name: ns },
      rules: [
        { apiGroups: [""], resources: ["namespaces", "services"], verbs: ["list", "watch"] },
        { apiGroups: ["networking.istio.io"], resources: ["virtualservices"], verbs: ["list", "watch"] },
      ],
    });
    await cluster.must("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      metadata: { name: ns },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: ns },
      subjects: [{ kind: "ServiceAccount", name: account, namespace: ns }],
    });
    source = await within(starting, 30_000, "the source to sync once allowed to list");
    assert.deepEqual(writer.names(SVC, ns), [`${ns}/svc`]);
    assert.deepEqual(writer.names(VS, ns), [`${ns}/vs`]);
    assert.equal(writer.replaces, 3, "one list per kind, once allowed");
    // And it watches from there.
    await objects.create(service(ns, "later"));
    await until(() => writer.names(SVC, ns).includes(`${ns}/later`), "a watch event");
  });
});

/** A disposable cluster of the test's own, reached by its sources through a CutProxy. */
async function privateCluster(options: Parameters<typeof Cluster.start>[0]): Promise<{
  cluster: Cluster;
  proxy: CutProxy;
  kubeConfig: KubeConfig;
}> {
  const cluster = await Cluster.start(options);
  const proxy = await CutProxy.start(cluster.url);
  return { cluster, proxy, kubeConfig: proxy.kubeConfig(cluster.kubeConfig()) };
}

describe("KubeSource (private cluster: watch cache off, CRDs installed and removed by the tests)", {
  skip,
  timeout: 180_000,
}, () => {
  let cluster: Cluster;
  let objects: Objects;
  let proxy: CutProxy;
  let kubeConfig: KubeConfig;
  const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

  before(async () => {
    // Without the watch cache, etcd serves watches: one from a compacted revision ends with 410.
    ({ cluster, proxy, kubeConfig } = await privateCluster({ crdDir: false, apiServerArgs: ["--watch-cache=false"] }));
    objects = new Objects(cluster);
  });
  after(async () => {
    await proxy?.close();
    await cluster?.stop();
  });
  afterEach(() => proxy?.release());

  /** Installs the VirtualService CRD serving only v1alpha3 (not the preferred v1), unless it is there. */
  async function installVirtualServiceCrd(): Promise<void> {
    const crd = virtualServiceCrd();
    crd.spec.versions = crd.spec.versions
      .filter((v) => v.name === "v1alpha3")
      .map((v) => ({ ...v, served: true, storage: true }));
    const res = await cluster.request("POST", crdPath, crd);
    assert.ok(res.status < 300 || res.status === 409, `installing the CRD: ${res.status} ${res.text}`);
    const deadline = Date.now() + 30_000;
    while ((await cluster.request("GET", "/apis/networking.istio.io/v1alpha3/virtualservices")).status !== 200) {
      assert.ok(Date.now() < deadline, "the VirtualService CRD was not served within 30 s");
      await sleep(100);
    }
  }

  const vsAlpha = (ns: string, name: string) => ({
    ...virtualService(ns, name),
    apiVersion: "networking.istio.io/v1alpha3",
  });

  test("a kind the server does not serve is skipped, then picked up (at the version served) once installed", async () => {
    const ns = await cluster.namespace("late-kind");
    const writer = new RecordingWriter();
    const source = await startSource(kubeConfig, writer, [NS, SVC, VS]);
    // start() did not wait for the missing kind, and has nothing of it.
    assert.equal(source.resourceVersions().get(VS), "", "VirtualServices never listed");
    assert.equal(writer.replacesOf.get(VS), undefined);
    assert.ok(writer.hasNamespace(ns));

    await installVirtualServiceCrd();
    await objects.create(vsAlpha(ns, "late"));
    await until(() => writer.names(VS).join() === `${ns}/late`, "the late kind's object");
    // v1 and v1beta1 answer 404: the source found the kind at the one version it is served at.
    assert.equal(writer.objects.get(`${VS} ${ns}/late`)?.apiVersion, "networking.istio.io/v1alpha3");
    // And watches it from there.
    await objects.create(vsAlpha(ns, "later"));
    await until(() => writer.names(VS).join() === `${ns}/late,${ns}/later`, "a watch event of the late kind");
    assert.deepEqual(writer.duplicateWrites(), []);
  });

  test("a kind whose CRD is removed while the watch is down loses its objects", async () => {
    const ns = await cluster.namespace("doomed");
    await installVirtualServiceCrd();
    await objects.create(vsAlpha(ns, "doomed"));
    const writer = new RecordingWriter();
    const source = await startSource(kubeConfig, writer, [NS, VS]);
    assert.deepEqual(writer.names(VS, ns), [`${ns}/doomed`]);
    const replaces = writer.replacesOf.get(VS) ?? 0;

    // The source is cut off first, so the deletes are never seen as events: only the 404 relist tells.
    proxy.hold();
    await cluster.must("DELETE", `${crdPath}/virtualservices.networking.istio.io`);
    const deadline = Date.now() + 30_000;
    while ((await cluster.request("GET", `${crdPath}/virtualservices.networking.istio.io`)).status !== 404) {
      assert.ok(Date.now() < deadline, "the CRD was not gone within 30 s");
      await sleep(100);
    }
    proxy.release();
    // Every VirtualService goes (this namespace's and any an earlier test left), with the kind.
    await until(() => writer.names(VS).length === 0, "the kind's objects removed");
    assert.ok((writer.replacesOf.get(VS) ?? 0) > replaces, "removed by replacing the kind with nothing");
    assert.equal(source.resourceVersions().get(VS), "", "back to looking for the kind");
  });

  test("410 Expired after an etcd compaction → relist: the gap's deletes are applied, nothing is duplicated", async () => {
    const ns = await cluster.namespace("expired");
    await objects.create(service(ns, "stays"));
    await objects.create(service(ns, "deleted-in-gap"));
    const writer = new RecordingWriter();
    const source = await startSource(kubeConfig, writer, [NS, SVC]);
    await objects.create(service(ns, "before-cut"));
    await until(() => writer.names(SVC, ns).includes(`${ns}/before-cut`), "a watch event");
    const resumeFrom = source.resourceVersions().get(SVC);
    const replaces = writer.replacesOf.get(SVC) ?? 0;

    proxy.hold();
    await objects.delete(service(ns, "deleted-in-gap"));
    await objects.create(service(ns, "added-in-gap"));
    const compactedAt = await cluster.compactEtcd();
    assert.ok(compactedAt > Number(resumeFrom), "the resume point is compacted away");
    // An exact list at the old resourceVersion is gone too: that history no longer exists.
    const old = await cluster.request(
      "GET",
      `/api/v1/namespaces/${ns}/services?resourceVersion=${resumeFrom}&resourceVersionMatch=Exact`,
    );
    assert.equal(old.status, 410, old.text);
    proxy.release();

    await until(() => (writer.replacesOf.get(SVC) ?? 0) > replaces, "a relist");
    assert.deepEqual(writer.names(SVC, ns), [`${ns}/added-in-gap`, `${ns}/before-cut`, `${ns}/stays`]);
    assert.equal(writer.replacesOf.get(SVC), replaces + 1, "exactly one relist");
    assert.ok(Number(source.resourceVersions().get(SVC)) >= compactedAt, "resumes from the relist's resourceVersion");
    assert.deepEqual(writer.duplicateWrites(), []);
    // After the relist the watch is live again.
    await objects.create(service(ns, "after"));
    await until(() => writer.names(SVC, ns).includes(`${ns}/after`), "an event after the relist");
  });
});

describe("KubeSource (private cluster: API server restart)", { skip, timeout: 180_000 }, () => {
  let cluster: Cluster;
  let objects: Objects;
  let proxy: CutProxy;
  let kubeConfig: KubeConfig;

  before(async () => {
    ({ cluster, proxy, kubeConfig } = await privateCluster({ crdDir: false }));
    objects = new Objects(cluster);
  });
  after(async () => {
    await proxy?.close();
    await cluster?.stop();
  });

  test("after an API server restart the watch cache forgets the resume point: 410 → relist, the gap's changes applied", async () => {
    const ns = await cluster.namespace("restart");
    await objects.create(service(ns, "stays"));
    await objects.create(service(ns, "deleted-in-gap"));
    const writer = new RecordingWriter();
    const source = await startSource(kubeConfig, writer, [NS, SVC]);
    const replaces = writer.replacesOf.get(SVC) ?? 0;
    const resumeFrom = Number(source.resourceVersions().get(SVC));

    proxy.hold();
    // A change the Service watch never sees puts etcd's revision past the resume point, so the
    // restarted watch cache (which starts at the revision of its first list) no longer holds it.
    const other = await cluster.must("POST", `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: "bump" } });
    assert.ok(Number(other.body.metadata.resourceVersion) > resumeFrom);
    await cluster.restartApiServer();
    await objects.delete(service(ns, "deleted-in-gap"));
    await objects.create(service(ns, "added-in-gap"));
    proxy.release();

    await until(() => (writer.replacesOf.get(SVC) ?? 0) > replaces, "a relist");
    await until(() => writer.names(SVC, ns).join() === `${ns}/added-in-gap,${ns}/stays`, "the gap's create and delete");
    assert.deepEqual(writer.duplicateWrites(), []);
    await objects.create(service(ns, "after"));
    await until(() => writer.names(SVC, ns).includes(`${ns}/after`), "an event after the restart");
  });

  test("a source that stays connected follows the restart: its watch ends, it resumes or relists, and keeps up", async () => {
    const ns = await cluster.namespace("restart-live");
    const writer = new RecordingWriter();
    await startSource(cluster.kubeConfig(), writer, [NS, SVC]);
    await objects.create(service(ns, "before"));
    await until(() => writer.names(SVC, ns).includes(`${ns}/before`), "a watch event");
    await cluster.restartApiServer();
    await objects.create(service(ns, "after"));
    await objects.delete(service(ns, "before"));
    await until(() => writer.names(SVC, ns).join() === `${ns}/after`, "changes after the restart");
    assert.deepEqual(writer.duplicateWrites(), []);
  });
});

// Bookmarks come from the API server's watch cache about once a minute on a long watch (the
// source asks for 5-10 minutes), so this source starts before every other test, on a kind no test
// here changes, and the last test looks at what it got meanwhile. The cache sends none for a kind
// it has seen no event of, and a bookmark carries the revision the cache has reached, which moves
// without events of the kind only when etcd reports progress (which a consistent list asks for).
const WG = "networking.istio.io/WorkloadGroup";
let bookmarks:
  | {
      cluster: Cluster;
      proxy: CutProxy;
      writer: RecordingWriter;
      source: KubeSource;
      namespace: string;
      startedAt: number;
      listedAt: string;
    }
  | undefined;

function workloadGroup(namespace: string, name: string): ConfigObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "WorkloadGroup",
    metadata: { name, namespace },
    spec: { template: { labels: { app: name } } },
  };
}

/** Starts the bookmark watcher (from the first describe's `before`, so its minute overlaps the other tests). */
async function startBookmarkWatcher(cluster: Cluster): Promise<void> {
  const namespace = await cluster.namespace("bookmarks");
  // An event for the watch cache of the kind, before the source lists (so it is no event to it).
  await new Objects(cluster).create(workloadGroup(namespace, "existing"));
  const proxy = await CutProxy.start(cluster.url);
  const writer = new RecordingWriter();
  const source = new KubeSource({
    kubeConfig: proxy.kubeConfig(cluster.kubeConfig()),
    writer,
    kinds: [findKind(WG)],
    // Every revision: an object the revision filter hid would move the resourceVersion unseen.
    revision: "",
    backoff: { initialMs: 5, maxMs: 50 },
  });
  await source.start();
  const listedAt = source.resourceVersions().get(WG) ?? "";
  bookmarks = { cluster, proxy, writer, source, namespace, startedAt: Date.now(), listedAt };
}

describe("KubeSource bookmarks (shared cluster)", { skip, timeout: 180_000 }, () => {
  after(async () => {
    bookmarks?.source.stop();
    await bookmarks?.proxy.close();
  });

  test("bookmarks advance the resourceVersion without events; a dropped watch resumes from there without a relist", async () => {
    assert.ok(bookmarks, "the bookmark watcher was started with the shared cluster's tests");
    const { cluster, proxy, writer, source, namespace, startedAt, listedAt } = bookmarks;
    assert.deepEqual(writer.names(WG, namespace), [`${namespace}/existing`]);
    const reached = () => Number(source.resourceVersions().get(WG));
    // Other kinds' writes move etcd's revision on; consistent lists of the kind bring its cache there.
    const configMaps = `/api/v1/namespaces/${namespace}/configmaps`;
    await cluster.must("POST", configMaps, { metadata: { name: "progress" } });
    let tick = 0;
    const progress = setInterval(() => {
      const patch = { data: { tick: String(++tick) } };
      const mergePatch = { "content-type": "application/merge-patch+json" };
      void cluster.request("PATCH", `${configMaps}/progress`, patch, mergePatch).catch(() => {});
      void cluster
        .request("GET", `/apis/networking.istio.io/v1/namespaces/${namespace}/workloadgroups`)
        .catch(() => {});
    }, 2000);
    // Another test file sharing the cluster may change WorkloadGroups too: a bookmark is the
    // resourceVersion moving on between two looks with no event of the kind in between.
    let last = { rv: Number(listedAt), changes: 0 };
    let byBookmark = false;
    const advancedByBookmark = () => {
      const now = { rv: reached(), changes: writer.changesOf.get(WG) ?? 0 };
      if (now.rv > last.rv && now.changes === last.changes) byBookmark = true;
      last = now;
      return byBookmark;
    };
    try {
      // A minute between bookmarks, plus slack for a loaded machine.
      const left = Math.max(1000, startedAt + 100_000 - Date.now());
      await until(advancedByBookmark, "a bookmark (the resourceVersion moving on without an event)", left);
    } finally {
      clearInterval(progress);
    }
    assert.equal(writer.replacesOf.get(WG), 1, "listed once");

    proxy.cut();
    await new Objects(cluster).create(workloadGroup(namespace, "after-cut"));
    await until(() => writer.names(WG, namespace).length === 2, "an event after the cut");
    assert.equal(writer.replacesOf.get(WG), 1, "resumed from the bookmark's resourceVersion, without a relist");
  });
});
