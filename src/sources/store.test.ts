import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Registry } from "prom-client";
import { type ConfigObject, kindKey } from "../config/index.ts";
import { derive, singleton } from "../krt/index.ts";
import { CONFIG_PROBLEMS_METRIC, ConfigStore } from "./store.ts";
import type { ConfigEvent } from "./types.ts";

const VS = "networking.istio.io/VirtualService";
const NS = "/Namespace";

function virtualService(name: string, host = name, namespace = "default"): ConfigObject {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name, namespace },
    spec: { hosts: [host] },
  };
}

function namespace(name: string): ConfigObject {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name } };
}

function vsKey(name: string, namespace = "default") {
  return { kind: VS, namespace, name };
}

/** Records every event batch the store delivers. */
function recordBatches(store: ConfigStore): ConfigEvent[][] {
  const batches: ConfigEvent[][] = [];
  store.onChange((events) => batches.push([...events]));
  return batches;
}

function summary(events: readonly ConfigEvent[]): string[] {
  return events.map((e) => `${e.type} ${e.key.kind} ${e.key.namespace}/${e.key.name}`).sort();
}

describe("ConfigStore", () => {
  test("replace applies adds, updates and deletes as one event batch and one collection batch", () => {
    const store = new ConfigStore();
    store.replace("file", "a.yaml", [virtualService("one"), virtualService("two"), namespace("default")]);
    const vsBatches: string[][] = [];
    store
      .collection(VS)
      .registerBatch(
        (events) =>
          vsBatches.push(events.map((e) => `${e.type} ${e.new?.metadata.name ?? e.old?.metadata.name}`).sort()),
        false,
      );
    const batches = recordBatches(store);

    store.replace("file", "a.yaml", [virtualService("one", "changed"), virtualService("three"), namespace("default")]);

    assert.equal(batches.length, 1);
    assert.deepEqual(summary(batches[0]), [
      `add ${VS} default/three`,
      `delete ${VS} default/two`,
      `update ${VS} default/one`,
    ]);
    assert.deepEqual(vsBatches, [["add three", "delete two", "update one"]]);
    assert.deepEqual(
      store.list(VS).map((s) => s.object.metadata.name),
      ["one", "three"],
    );
  });

  test("a replace touching several kinds is one krt change: a value computed from both recomputes once", () => {
    const store = new ConfigStore();
    store.replace("file", "a.yaml", [namespace("default"), virtualService("one")]);
    const seen: string[] = [];
    const combined = singleton((ctx) => {
      const value = `${ctx.fetch(store.collection(NS)).length} ns, ${ctx.fetch(store.collection(VS)).length} vs`;
      seen.push(value);
      return value;
    });
    assert.deepEqual(seen, ["1 ns, 1 vs"]);
    store.replace("file", "a.yaml", [
      namespace("default"),
      namespace("prod"),
      virtualService("one"),
      virtualService("two"),
    ]);
    assert.deepEqual(seen, ["1 ns, 1 vs", "2 ns, 2 vs"]);
    assert.equal(combined.get(), "2 ns, 2 vs");
  });

  test("an identical reload emits nothing and keeps resourceVersions", () => {
    const store = new ConfigStore();
    store.replace("file", "a.yaml", [virtualService("one")]);
    const version = store.get(vsKey("one"))?.resourceVersion;
    const batches = recordBatches(store);
    store.replace("file", "a.yaml", [virtualService("one")]);
    assert.equal(batches.length, 0);
    assert.equal(store.get(vsKey("one"))?.resourceVersion, version);
  });

  test("resourceVersions increase with every change, store-wide", () => {
    const store = new ConfigStore();
    store.upsert("memory", virtualService("a"));
    store.upsert("memory", virtualService("b"));
    const a1 = store.get(vsKey("a"))!.resourceVersion;
    const b1 = store.get(vsKey("b"))!.resourceVersion;
    assert.ok(b1 > a1);
    store.upsert("memory", virtualService("a", "other"));
    const a2 = store.get(vsKey("a"))!.resourceVersion;
    assert.ok(a2 > b1);
    assert.equal(store.resourceVersion, a2);
    assert.equal(store.get(vsKey("b"))!.resourceVersion, b1);
  });

  test("upsert and delete emit one event each; stored objects are frozen", () => {
    const store = new ConfigStore();
    const batches = recordBatches(store);
    const obj = virtualService("a");
    store.upsert("memory", obj);
    assert.ok(Object.isFrozen(obj.metadata));
    store.delete("memory", vsKey("a"));
    store.delete("memory", vsKey("absent"));
    assert.deepEqual(batches.map(summary), [[`add ${VS} default/a`], [`delete ${VS} default/a`]]);
    assert.equal(store.get(vsKey("a")), undefined);
  });

  test("a kind relist (replace with the kind key) removes objects upserted before", () => {
    const store = new ConfigStore();
    store.upsert("kubernetes", virtualService("a"));
    store.upsert("kubernetes", virtualService("b"));
    store.replace("kubernetes", VS, [virtualService("b")]);
    assert.deepEqual(
      store.list(VS).map((s) => s.object.metadata.name),
      ["b"],
    );
  });

  test("the first scope in sorted order wins a conflict; the other is a problem and takes over when the winner goes", () => {
    const store = new ConfigStore();
    store.replace("file", "b.yaml", [virtualService("dup", "from-b")]);
    const batches = recordBatches(store);
    store.replace("file", "a.yaml", [virtualService("dup", "from-a")]);

    assert.equal(store.get(vsKey("dup"))?.scope, "a.yaml");
    assert.deepEqual(store.get(vsKey("dup"))?.object.spec, { hosts: ["from-a"] });
    assert.deepEqual(batches.map(summary), [[`update ${VS} default/dup`]]);
    const problems = store.problems();
    assert.equal(problems.length, 1);
    assert.equal(problems[0].scope, "b.yaml");
    assert.match(problems[0].message, /also defined by file a\.yaml/);

    store.replace("file", "a.yaml", []);
    assert.equal(store.get(vsKey("dup"))?.scope, "b.yaml");
    assert.deepEqual(store.collection(VS).get("default/dup")?.spec, { hosts: ["from-b"] });
    assert.deepEqual(store.problems(), []);
  });

  test("a collection is typed by its kind key: its objects' specs need no cast", () => {
    const store = new ConfigStore();
    store.upsert("file", virtualService("reviews", "reviews.default.svc.cluster.local"));
    const reviews = store.collection(kindKey("networking.istio.io", "VirtualService")).get("default/reviews");
    // `hosts` type-checks only because the collection holds VirtualServices.
    assert.deepEqual(reviews?.spec?.hosts, ["reviews.default.svc.cluster.local"]);
  });

  test("sources win conflicts in the order given, whatever order they write in", () => {
    const store = new ConfigStore({ sourceOrder: ["file", "kubernetes"] });
    store.upsert("kubernetes", virtualService("dup", "from-cluster"));
    store.replace("file", "z.yaml", [virtualService("dup", "from-file")]);
    assert.equal(store.get(vsKey("dup"))?.source, "file");
    assert.deepEqual(
      store.problems().map((p) => p.source),
      ["kubernetes"],
    );
    store.replace("file", "z.yaml", []);
    assert.equal(store.get(vsKey("dup"))?.source, "kubernetes");
    assert.deepEqual(store.get(vsKey("dup"))?.object.spec, { hosts: ["from-cluster"] });
  });

  test("a takeover by an identical definition changes the owner and emits nothing", () => {
    const store = new ConfigStore();
    store.replace("file", "a.yaml", [virtualService("dup")]);
    store.replace("file", "b.yaml", [virtualService("dup")]);
    const batches = recordBatches(store);
    store.replace("file", "a.yaml", []);
    assert.equal(batches.length, 0);
    assert.equal(store.get(vsKey("dup"))?.scope, "b.yaml");
  });

  test("batch groups several writes into one event batch", () => {
    const store = new ConfigStore();
    store.replace("file", "old.yaml", [virtualService("moved")]);
    const batches = recordBatches(store);
    store.batch(() => {
      store.replace("file", "old.yaml", []);
      store.replace("file", "new.yaml", [virtualService("moved"), virtualService("other")]);
    });
    assert.deepEqual(batches.map(summary), [[`add ${VS} default/other`]]);
    assert.equal(store.get(vsKey("moved"))?.scope, "new.yaml");
  });

  test("problems are kept per source and scope, cleared by an empty report, and counted by the gauge", async () => {
    const metrics = new Registry();
    const store = new ConfigStore({ metrics });
    store.reportProblems("file", "a.yaml", [{ source: "file", where: "a.yaml:3", message: "bad" }]);
    store.reportProblems("file", "b.yaml", [
      { source: "file", where: "b.yaml:1", message: "worse" },
      { source: "file", where: "b.yaml:9", message: "worst" },
    ]);
    store.reportProblems("memory", "x", [{ source: "memory", where: "x", message: "no" }]);
    assert.deepEqual(
      store.problems().map((p) => `${p.source} ${p.scope} ${p.where}`),
      ["file a.yaml a.yaml:3", "file b.yaml b.yaml:1", "file b.yaml b.yaml:9", "memory x x"],
    );
    const text = await metrics.metrics();
    assert.match(text, new RegExp(`${CONFIG_PROBLEMS_METRIC}\\{source="file"\\} 3`));
    assert.match(text, new RegExp(`${CONFIG_PROBLEMS_METRIC}\\{source="memory"\\} 1`));

    store.reportProblems("file", "b.yaml", []);
    assert.deepEqual(
      store.problems().map((p) => p.where),
      ["a.yaml:3", "x"],
    );
    assert.match(await metrics.metrics(), new RegExp(`${CONFIG_PROBLEMS_METRIC}\\{source="file"\\} 1`));
  });

  test("collections are keyed namespace/name, or name when cluster-scoped, and derived collections follow", () => {
    const store = new ConfigStore();
    store.upsert("memory", namespace("prod"));
    store.upsert("memory", virtualService("a", "a", "prod"));
    assert.equal(store.collection(NS).get("prod")?.metadata.name, "prod");
    const hosts = derive(
      store.collection(VS),
      (_ctx, vs) => ({
        name: vs.metadata.name ?? "",
        host: (vs.spec as { hosts: string[] }).hosts[0],
      }),
      { keyOf: (h) => h.name },
    );
    assert.equal(hosts.get("a")?.host, "a");
    store.upsert("memory", virtualService("a", "moved", "prod"));
    assert.equal(hosts.get("a")?.host, "moved");
    store.delete("memory", vsKey("a", "prod"));
    assert.equal(hosts.size, 0);
  });

  test("a handler that writes to the store sees its change in the next batch, in order", () => {
    const store = new ConfigStore();
    const seen: string[][] = [];
    store.onChange((events) => {
      seen.push(summary(events));
      if (events.some((e) => e.key.name === "a")) store.upsert("memory", virtualService("b"));
    });
    store.upsert("memory", virtualService("a"));
    assert.deepEqual(seen, [[`add ${VS} default/a`], [`add ${VS} default/b`]]);
  });
});
