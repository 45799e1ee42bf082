import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import { KubeTestServer } from "../../../test/kube-apiserver/index.ts";
import { type ConfigObject, KINDS, type KindInfo, kindKey } from "../../config/index.ts";
import type { ConfigWriter, ObjectKey, SourceProblem } from "../types.ts";
import { KubeApiError, KubeSource, type KubeSourceOptions } from "./index.ts";

/** A ConfigWriter that keeps what a store would hold and counts every write, to catch duplicates. */
class RecordingWriter implements ConfigWriter {
  readonly objects = new Map<string, ConfigObject>();
  readonly problems = new Map<string, readonly SourceProblem[]>();
  /** How often each object was written at each resourceVersion: "kindKey ns/name@rv" → count. */
  readonly writes = new Map<string, number>();
  replaces = 0;

  upsert(_source: string, obj: ConfigObject): void {
    const key = storeKey(obj);
    const version = `${key}@${obj.metadata.resourceVersion}`;
    this.writes.set(version, (this.writes.get(version) ?? 0) + 1);
    this.objects.set(key, obj);
  }

  delete(_source: string, key: ObjectKey): void {
    this.objects.delete(`${key.kindKey} ${key.namespace}/${key.name}`);
  }

  replace(_source: string, scope: string, objects: readonly ConfigObject[]): void {
    this.replaces++;
    for (const key of this.objects.keys()) if (key.startsWith(`${scope} `)) this.objects.delete(key);
    for (const obj of objects) this.objects.set(storeKey(obj), obj);
  }

  reportProblems(_source: string, scope: string, problems: readonly SourceProblem[]): void {
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

function service(namespace: string, name: string, labels: Record<string, string> = {}): ConfigObject {
  return { apiVersion: "v1", kind: "Service", metadata: { name, namespace, labels }, spec: { ports: [{ port: 80 }] } };
}

function namespace(name: string, labels: Record<string, string> = {}): ConfigObject {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } };
}

/** Waits (bounded) for a condition that some asynchronous delivery makes true. */
async function until(condition: () => boolean, what = "condition"): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(condition(), `timed out waiting for ${what}`);
}

describe("KubeSource", () => {
  let server: KubeTestServer;
  let source: KubeSource | undefined;
  let writer: RecordingWriter;

  async function startSource(options: Partial<KubeSourceOptions> = {}): Promise<KubeSource> {
    writer = new RecordingWriter();
    source = new KubeSource({
      kubeConfig: server.kubeConfig(),
      writer,
      kinds: [NS, SVC, VS].map(findKind),
      backoff: { initialMs: 5, maxMs: 20 },
      notInstalledRetryMs: 20,
      ...options,
    });
    await source.start();
    return source;
  }

  function listRequests(path: string): number {
    return server.requests.filter((r) => r.path === path && r.query.get("watch") !== "true").length;
  }

  function watchRequests(path: string): URLSearchParams[] {
    return server.requests.filter((r) => r.path === path && r.query.get("watch") === "true").map((r) => r.query);
  }

  before(async () => {
    server = await KubeTestServer.start();
  });
  afterEach(() => {
    source?.stop();
    source = undefined;
  });
  after(() => server.close());

  test("the initial list feeds the writer; adds, updates and deletes follow", async () => {
    server.create(namespace("t1"));
    server.create(virtualService("t1", "first"));
    server.create(service("t1", "web"));
    await startSource();
    // One atomic replace per kind for the initial list.
    assert.equal(writer.replaces, 3);
    assert.deepEqual(writer.names(VS), ["t1/first"]);
    assert.deepEqual(writer.names(SVC), ["t1/web"]);
    assert.ok(Object.isFrozen(writer.objects.get(`${VS} t1/first`)), "objects handed to the store are frozen");
    await until(() => server.openWatches() === 3, "three watches");

    server.create(virtualService("t1", "second"));
    const updated = server.update(virtualService("t1", "first", {}, ["first", "first.example"]));
    server.delete(service("t1", "web"));
    await until(() => writer.names(SVC).length === 0, "service delete");
    await until(() => writer.names(VS).length === 2, "second virtual service");
    assert.equal(writer.objects.get(`${VS} t1/first`)?.metadata.resourceVersion, updated.metadata.resourceVersion);
    assert.equal(writer.objects.get(`${VS} t1/first`)?.apiVersion, "networking.istio.io/v1");
    assert.deepEqual(writer.duplicateWrites(), []);
  });

  test("a watch dropped mid-stream resumes from its resourceVersion: changes in the gap arrive once", async () => {
    server.create(namespace("t2"));
    server.create(virtualService("t2", "keep"));
    server.create(virtualService("t2", "gone"));
    await startSource();
    const vsPath = "/apis/networking.istio.io/v1/virtualservices";
    const lists = listRequests(vsPath);
    await until(() => server.openWatches() === 3, "three watches");
    const seenVersion = source!.resourceVersions().get(VS);

    server.disconnectWatches();
    // Made before the source can reconnect: all of this happens in the gap.
    server.create(virtualService("t2", "new"));
    server.update(virtualService("t2", "keep", {}, ["keep", "kept"]));
    server.delete(virtualService("t2", "gone"));

    await until(() => writer.names(VS, "t2").join() === "t2/keep,t2/new", "gap changes");
    const hosts = () => (writer.objects.get(`${VS} t2/keep`)?.spec as { hosts?: string[] } | undefined)?.hosts;
    await until(() => hosts()?.join() === "keep,kept", "the update");
    assert.equal(listRequests(vsPath), lists, "resumed without a relist");
    assert.ok(watchRequests(vsPath).some((q) => q.get("resourceVersion") === seenVersion));
    assert.deepEqual(writer.duplicateWrites(), []);
  });

  test("a watch cut in the middle of a burst of events loses nothing and repeats nothing", async () => {
    server.create(namespace("burst"));
    await startSource();
    await until(() => server.openWatches() === 3, "three watches");
    const names = Array.from({ length: 40 }, (_, i) => `vs-${String(i).padStart(2, "0")}`);
    // Half go to the open watch, which is cut as soon as the first arrives (the others may be in
    // flight); the second half are made in the gap.
    for (const name of names.slice(0, 20)) server.create(virtualService("burst", name));
    await until(() => writer.names(VS, "burst").length > 0, "the first of the burst");
    server.disconnectWatches();
    for (const name of names.slice(20)) server.create(virtualService("burst", name));
    await until(() => writer.names(VS, "burst").length === 40, "all forty");
    assert.deepEqual(
      writer.names(VS, "burst"),
      names.map((n) => `burst/${n}`),
    );
    assert.deepEqual(writer.duplicateWrites(), []);
  });

  test("410 Expired → relist: deletes made during the gap are applied, nothing is duplicated", async () => {
    server.create(namespace("t3"));
    server.create(virtualService("t3", "stays"));
    server.create(virtualService("t3", "deleted-in-gap"));
    await startSource();
    const vsPath = "/apis/networking.istio.io/v1/virtualservices";
    const lists = listRequests(vsPath);
    const replaces = writer.replaces;
    await until(() => server.openWatches() === 3, "three watches");

    server.disconnectWatches();
    server.delete(virtualService("t3", "deleted-in-gap"));
    server.create(virtualService("t3", "added-in-gap"));
    server.compactHistory();

    await until(() => listRequests(vsPath) === lists + 1, "a relist");
    await until(() => !writer.names(VS).includes("t3/deleted-in-gap"), "the missed delete");
    assert.ok(writer.names(VS).includes("t3/added-in-gap"));
    assert.ok(writer.names(VS).includes("t3/stays"));
    assert.ok(writer.replaces > replaces, "the relist replaced the kind as a whole");
    assert.deepEqual(writer.duplicateWrites(), []);
    // After the relist the watch is live again.
    server.create(virtualService("t3", "after"));
    await until(() => writer.names(VS).includes("t3/after"), "an event after the relist");
  });

  test("bookmarks advance the resourceVersion, so a resume after compaction needs no relist", async () => {
    await startSource();
    const svcPath = "/api/v1/services";
    await until(() => server.openWatches() === 3, "three watches");
    // Changes to another kind move the global resourceVersion past what the Service watch has seen.
    server.create(virtualService("t1", "unrelated"));
    const target = String(server.resourceVersion);
    assert.notEqual(source!.resourceVersions().get(SVC), target);
    server.sendBookmarks();
    await until(() => source!.resourceVersions().get(SVC) === target, "the bookmark's resourceVersion");

    const lists = listRequests(svcPath);
    server.compactHistory();
    server.disconnectWatches();
    await until(() => watchRequests(svcPath).some((q) => q.get("resourceVersion") === target), "resume from bookmark");
    await until(() => server.openWatches() === 3, "watches back");
    assert.equal(listRequests(svcPath), lists, "no relist was needed");
  });

  test("discovery selectors: only selected namespaces; relabelling brings objects in and out", async () => {
    server.create(namespace("sel-a", { mesh: "on" }));
    server.create(namespace("sel-b"));
    server.create(service("sel-a", "in-a"));
    server.create(service("sel-b", "in-b"));
    await startSource({
      discoverySelectors: [
        { matchLabels: { mesh: "on" } },
        { matchExpressions: [{ key: "team", operator: "In", values: ["x"] }] },
      ],
    });
    const selected = (kind: string) => [...writer.names(kind, "sel-a"), ...writer.names(kind, "sel-b")];
    assert.deepEqual(selected(SVC), ["sel-a/in-a"]);
    assert.deepEqual(
      writer.names(NS).filter((n) => n.includes("sel-")),
      ["/sel-a"],
    );

    server.update(namespace("sel-b", { team: "x" }));
    await until(() => selected(SVC).join() === "sel-a/in-a,sel-b/in-b", "sel-b selected");
    assert.deepEqual(
      writer.names(NS).filter((n) => n.includes("sel-")),
      ["/sel-a", "/sel-b"],
    );

    server.update(namespace("sel-a", { mesh: "off" }));
    await until(() => selected(SVC).join() === "sel-b/in-b", "sel-a deselected");
    assert.deepEqual(
      writer.names(NS).filter((n) => n.includes("sel-")),
      ["/sel-b"],
    );

    // Objects created in an unselected namespace stay out.
    server.create(service("sel-a", "later"));
    server.create(service("sel-b", "later"));
    await until(() => selected(SVC).includes("sel-b/later"), "new service in sel-b");
    assert.ok(!selected(SVC).includes("sel-a/later"));

    // Dropping the selectors (a MeshConfig reload) selects everything.
    source!.setDiscoverySelectors([]);
    assert.deepEqual(selected(SVC), ["sel-a/in-a", "sel-a/later", "sel-b/in-b", "sel-b/later"]);
  });

  test("revision label: config of another revision is ignored; workloads are not filtered", async () => {
    server.create(namespace("rev"));
    server.create(virtualService("rev", "unlabelled"));
    server.create(virtualService("rev", "mine", { "istio.io/rev": "canary" }));
    server.create(virtualService("rev", "theirs", { "istio.io/rev": "stable" }));
    server.create(service("rev", "svc-theirs", { "istio.io/rev": "stable" }));
    await startSource({ revision: "canary" });
    assert.deepEqual(writer.names(VS, "rev"), ["rev/mine", "rev/unlabelled"]);
    assert.deepEqual(writer.names(SVC, "rev"), ["rev/svc-theirs"]);

    // Moving an object to another revision takes it away.
    server.update(virtualService("rev", "mine", { "istio.io/rev": "stable" }));
    await until(() => writer.names(VS, "rev").join() === "rev/unlabelled", "relabelled away");
  });

  test("an invalid object is reported and the last good version stays", async () => {
    server.create(namespace("bad"));
    const good = server.create(virtualService("bad", "vs"));
    server.create({ ...virtualService("bad", "never-good"), spec: { hosts: [] } });
    await startSource();
    const scope = `${VS} bad/never-good`;
    assert.ok(!writer.names(VS).includes("bad/never-good"));
    assert.match(writer.problems.get(scope)?.[0].message ?? "", /spec/);

    server.update({ ...virtualService("bad", "vs"), spec: { hosts: [] } });
    await until(() => writer.problems.has(`${VS} bad/vs`), "the problem report");
    assert.equal(writer.objects.get(`${VS} bad/vs`)?.metadata.resourceVersion, good.metadata.resourceVersion);

    const fixed = server.update(virtualService("bad", "vs"));
    await until(() => writer.objects.get(`${VS} bad/vs`)?.metadata.resourceVersion === fixed.metadata.resourceVersion);
    assert.ok(!writer.problems.has(`${VS} bad/vs`), "problems cleared once valid");

    server.delete(virtualService("bad", "never-good"));
    await until(() => !writer.problems.has(scope), "problems cleared on delete");
  });

  test("writeStatus updates the status subresource; a stale object is a conflict", async () => {
    server.create(namespace("st"));
    server.create(virtualService("st", "vs"));
    await startSource();
    const stored = writer.objects.get(`${VS} st/vs`)!;
    const status = { conditions: [{ type: "Reconciled", status: "True" }] };
    const written = await source!.writeStatus(stored, status);
    assert.deepEqual(server.get(stored).status, status);
    assert.deepEqual(written.status, status);
    await until(() => writer.objects.get(`${VS} st/vs`)?.metadata.resourceVersion === written.metadata.resourceVersion);

    await assert.rejects(
      source!.writeStatus(stored, {}),
      (err: unknown) => err instanceof KubeApiError && err.code === 409,
    );
  });

  test("failing requests are retried with backoff until the kind is listed", async () => {
    server.create(namespace("retry"));
    server.create(service("retry", "svc"));
    const before = server.requests.length;
    server.failRequests(4);
    await startSource();
    assert.deepEqual(writer.names(SVC, "retry"), ["retry/svc"]);
    // Four failed answers, then one successful list per kind.
    assert.ok(server.requests.length - before >= 4 + 3);
  });

  test("a kind whose CRD is removed while the watch is down loses its objects", async () => {
    const partial = await KubeTestServer.start();
    const local = new RecordingWriter();
    const localSource = new KubeSource({
      kubeConfig: partial.kubeConfig(),
      writer: local,
      kinds: [NS, VS].map(findKind),
      backoff: { initialMs: 5, maxMs: 20 },
      notInstalledRetryMs: 20,
    });
    try {
      partial.create(virtualService("default", "doomed"));
      await localSource.start();
      assert.deepEqual(local.names(VS), ["default/doomed"]);
      await until(() => partial.openWatches() === 2, "two watches");
      // The watch is cut first, so the deletes are never seen as events: only the 404 relist tells.
      partial.disconnectWatches();
      partial.uninstallKind(findKind(VS));
      await until(() => local.names(VS).length === 0, "the kind's objects removed");
      assert.ok(local.replaces >= 3, "removed by replacing the kind with nothing");
    } finally {
      localSource.stop();
      await partial.close();
    }
  });

  test("a kind the server does not serve is skipped, then picked up once installed", async () => {
    const partial = await KubeTestServer.start({ kinds: [NS, SVC].map(findKind) });
    const local = new RecordingWriter();
    const localSource = new KubeSource({
      kubeConfig: partial.kubeConfig(),
      writer: local,
      kinds: [NS, SVC, VS].map(findKind),
      backoff: { initialMs: 5, maxMs: 20 },
      notInstalledRetryMs: 20,
    });
    try {
      await localSource.start();
      assert.equal(partial.requests.filter((r) => r.path.includes("virtualservices")).length, 3, "tried every version");
      partial.installKind(findKind(VS));
      partial.create(virtualService("default", "late"));
      await until(() => local.names(VS).join() === "default/late", "the late kind");
    } finally {
      localSource.stop();
      await partial.close();
    }
  });
});
