import assert from "node:assert/strict";
import { test } from "node:test";
import type { Collection, Event } from "./collection.ts";
import { derive, deriveMany } from "./derived.ts";
import { index } from "./indexes.ts";
import { StaticCollection } from "./static.ts";

interface Meta {
  name: string;
  namespace: string;
  labels?: Record<string, string>;
}
interface Node {
  metadata: { name: string; labels: Record<string, string> };
}
interface Pod {
  metadata: Meta;
  spec: { nodeName: string };
  ip: string;
}
interface Service {
  metadata: Meta;
  spec: { selector?: Record<string, string> };
}
interface EndpointSlice {
  metadata: Meta;
  endpoints: string[];
}
interface Located {
  name: string;
  zone: string | undefined;
}

function node(name: string, zone: string): Node {
  return { metadata: { name, labels: { "topology.kubernetes.io/zone": zone } } };
}

function pod(name: string, nodeName: string, labels: Record<string, string> = {}, namespace = "default"): Pod {
  return { metadata: { name, namespace, labels }, spec: { nodeName }, ip: `10.0.0.${name.length}` };
}

function service(name: string, selector: Record<string, string>, namespace = "default"): Service {
  return { metadata: { name, namespace }, spec: { selector } };
}

function slice(name: string, serviceName: string, endpoints: string[]): EndpointSlice {
  return {
    metadata: { name, namespace: "default", labels: { "kubernetes.io/service-name": serviceName } },
    endpoints,
  };
}

const locatedKey = { keyOf: (l: Located) => l.name };

function recomputes(c: { debug(): { recomputes: number } }): number {
  return c.debug().recomputes;
}

/** Events from now on, with the existing state replayed first when asked. */
function collect<T>(c: Collection<T>, replay = true): Event<T>[] {
  const seen: Event<T>[] = [];
  c.registerBatch((events) => seen.push(...events), replay);
  return seen;
}

test("a derived collection follows its input through add, update and delete", () => {
  const pods = new StaticCollection([pod("a", "n1")]);
  const ips = derive(pods, (_ctx, p) => ({ name: p.metadata.name, ip: p.ip }), { keyOf: (o) => o.name });
  const seen = collect(ips);
  pods.upsert({ ...pod("a", "n1"), ip: "10.1.1.1" });
  pods.upsert(pod("bb", "n1"));
  pods.delete("default/a");
  assert.deepEqual(seen, [
    { type: "add", new: { name: "a", ip: "10.0.0.1" } },
    { type: "update", old: { name: "a", ip: "10.0.0.1" }, new: { name: "a", ip: "10.1.1.1" } },
    { type: "add", new: { name: "bb", ip: "10.0.0.2" } },
    { type: "delete", old: { name: "a", ip: "10.1.1.1" } },
  ]);
  assert.deepEqual(ips.list(), [{ name: "bb", ip: "10.0.0.2" }]);
});

test("a transform returning undefined produces no output, and its earlier output is deleted", () => {
  const pods = new StaticCollection([pod("a", "n1", { app: "x" })]);
  const apps = derive(pods, (_ctx, p) => p.metadata.labels?.app);
  const seen = collect(apps);
  pods.upsert(pod("a", "n1", {}));
  assert.deepEqual(seen, [
    { type: "add", new: "x" },
    { type: "delete", old: "x" },
  ]);
  assert.equal(apps.size, 0);
});

test("an input change whose output is equal recomputes but emits nothing", () => {
  const pods = new StaticCollection([pod("a", "n1")]);
  const names = derive(pods, (_ctx, p) => p.metadata.name);
  const seen = collect(names);
  pods.upsert({ ...pod("a", "n1"), ip: "10.9.9.9" });
  assert.equal(recomputes(names), 2);
  assert.deepEqual(seen, [{ type: "add", new: "a" }]);
});

test("deletes propagate through a chain of derived collections", () => {
  const pods = new StaticCollection([pod("a", "n1"), pod("b", "n1")]);
  const names = derive(pods, (_ctx, p) => p.metadata.name);
  const upper = derive(names, (_ctx, n) => n.toUpperCase());
  const seen = collect(upper);
  pods.delete("default/a");
  assert.deepEqual(upper.list(), ["B"]);
  assert.deepEqual(seen.at(-1), { type: "delete", old: "A" });
});

test("1:N: each input yields many outputs; changing or deleting the input changes only its outputs", () => {
  const slices = new StaticCollection([slice("s1", "svc", ["1.1.1.1", "1.1.1.2"]), slice("s2", "svc", ["2.2.2.2"])]);
  const endpoints = deriveMany(slices, (_ctx, s) => s.endpoints);
  assert.deepEqual(endpoints.list(), ["1.1.1.1", "1.1.1.2", "2.2.2.2"]);
  const seen = collect(endpoints, false);
  slices.upsert(slice("s1", "svc", ["1.1.1.2", "1.1.1.3"]));
  slices.delete("default/s2");
  assert.deepEqual(seen, [
    { type: "delete", old: "1.1.1.1" },
    { type: "add", new: "1.1.1.3" },
    { type: "delete", old: "2.2.2.2" },
  ]);
});

test("1:N: when two inputs produce one key, the first producer wins and the next takes over when it stops", () => {
  interface Owned {
    host: string;
    owner: string;
  }
  const owners = new StaticCollection([
    { metadata: { name: "first", namespace: "ns" }, hosts: ["shared.example", "a.example"] },
    { metadata: { name: "second", namespace: "ns" }, hosts: ["shared.example"] },
  ]);
  const hosts = deriveMany(owners, (_ctx, o): Owned[] => o.hosts.map((host) => ({ host, owner: o.metadata.name })), {
    keyOf: (h) => h.host,
  });
  assert.deepEqual(hosts.get("shared.example"), { host: "shared.example", owner: "first" });
  const seen = collect(hosts, false);
  owners.delete("ns/first");
  assert.deepEqual(seen, [
    {
      type: "update",
      old: { host: "shared.example", owner: "first" },
      new: { host: "shared.example", owner: "second" },
    },
    { type: "delete", old: { host: "a.example", owner: "first" } },
  ]);
});

// 1,000 pods over 100 nodes (10 per node); each output carries its node's zone, fetched by key.
function podsOnNodes(): { nodes: StaticCollection<Node>; pods: StaticCollection<Pod> } {
  const nodes = new StaticCollection(Array.from({ length: 100 }, (_, i) => node(`node-${i}`, "zone-a")));
  const pods = new StaticCollection(Array.from({ length: 1000 }, (_, i) => pod(`pod-${i}`, `node-${i % 100}`)));
  return { nodes, pods };
}

function locate(nodes: StaticCollection<Node>, pods: StaticCollection<Pod>) {
  return derive(
    pods,
    (ctx, p): Located => {
      const n = ctx.fetchOne(nodes, { key: p.spec.nodeName });
      return { name: p.metadata.name, zone: n?.metadata.labels["topology.kubernetes.io/zone"] };
    },
    locatedKey,
  );
}

test("changing one fetched object recomputes exactly the outputs that fetched it", () => {
  const { nodes, pods } = podsOnNodes();
  const located = locate(nodes, pods);
  assert.equal(recomputes(located), 1000);
  const seen = collect(located, false);

  nodes.upsert(node("node-7", "zone-b"));
  assert.equal(recomputes(located), 1010);
  assert.deepEqual(seen.map((e) => e.new?.name).sort(), [
    "pod-107",
    "pod-207",
    "pod-307",
    "pod-407",
    "pod-507",
    "pod-607",
    "pod-7",
    "pod-707",
    "pod-807",
    "pod-907",
  ]);
  assert.ok(seen.every((e) => e.type === "update" && e.new.zone === "zone-b"));
});

test("a fetched object that changes nothing the outputs use recomputes them but emits nothing", () => {
  const { nodes, pods } = podsOnNodes();
  const located = locate(nodes, pods);
  const seen = collect(located, false);
  nodes.upsert({ metadata: { name: "node-3", labels: { "topology.kubernetes.io/zone": "zone-a", extra: "1" } } });
  assert.equal(recomputes(located), 1010);
  assert.deepEqual(seen, []);
});

test("a fetch by key of a missing object is woken when that object appears, and by nothing else", () => {
  const { nodes, pods } = podsOnNodes();
  pods.upsert(pod("orphan", "node-new"));
  const located = locate(nodes, pods);
  assert.equal(located.get("orphan")?.zone, undefined);
  const before = recomputes(located);
  nodes.upsert(node("node-unused", "zone-c"));
  assert.equal(recomputes(located), before);
  nodes.upsert(node("node-new", "zone-c"));
  assert.equal(recomputes(located), before + 1);
  assert.equal(located.get("orphan")?.zone, "zone-c");
  nodes.delete("node-new");
  assert.equal(recomputes(located), before + 2);
  assert.equal(located.get("orphan")?.zone, undefined);
});

test("an input that stops fetching an object is no longer recomputed when that object changes", () => {
  const { nodes, pods } = podsOnNodes();
  const located = locate(nodes, pods);
  pods.upsert(pod("pod-5", "node-6"));
  const before = recomputes(located);
  nodes.upsert(node("node-5", "zone-z"));
  assert.equal(recomputes(located), before + 9);
  assert.equal(located.get("pod-5")?.zone, "zone-a");
});

test("a batch touching many fetched objects recomputes each dependent once", () => {
  const { nodes, pods } = podsOnNodes();
  const located = locate(nodes, pods);
  nodes.update({ upsert: [node("node-1", "zone-b"), node("node-2", "zone-b")], delete: ["node-3"] });
  assert.equal(recomputes(located), 1030);
});

test("fetchIndex: a slice change recomputes only the services whose index key it had or has", () => {
  const services = new StaticCollection(Array.from({ length: 50 }, (_, i) => service(`svc-${i}`, { app: `a${i}` })));
  const slices = new StaticCollection(
    Array.from({ length: 50 }, (_, i) => slice(`svc-${i}-x`, `svc-${i}`, [`10.0.${i}.1`])),
  );
  const byService = index(slices, (s) => {
    const name = s.metadata.labels?.["kubernetes.io/service-name"];
    return name === undefined ? [] : [`${s.metadata.namespace}/${name}`];
  });
  const endpoints = derive(
    services,
    (ctx, svc) => ({
      name: svc.metadata.name,
      ips: ctx.fetchIndex(byService, `default/${svc.metadata.name}`).flatMap((s) => s.endpoints),
    }),
    { keyOf: (e) => e.name },
  );
  assert.equal(recomputes(endpoints), 50);

  slices.upsert(slice("svc-3-x", "svc-3", ["10.0.3.1", "10.0.3.2"]));
  assert.equal(recomputes(endpoints), 51);
  assert.deepEqual(endpoints.get("svc-3")?.ips, ["10.0.3.1", "10.0.3.2"]);

  // Moving a slice to another service wakes the old owner and the new one.
  slices.upsert(slice("svc-3-x", "svc-4", ["10.0.3.1"]));
  assert.equal(recomputes(endpoints), 53);
  assert.deepEqual(endpoints.get("svc-3")?.ips, []);
  assert.deepEqual(endpoints.get("svc-4")?.ips, ["10.0.4.1", "10.0.3.1"]);
});

test("namespace and label filters: a pod change wakes only services in its namespace that selected it before or after", () => {
  const services = new StaticCollection([
    service("web", { app: "web" }, "ns1"),
    service("db", { app: "db" }, "ns1"),
    service("web", { app: "web" }, "ns2"),
  ]);
  const pods = new StaticCollection([
    pod("w1", "n", { app: "web" }, "ns1"),
    pod("d1", "n", { app: "db" }, "ns1"),
    pod("w2", "n", { app: "web" }, "ns2"),
  ]);
  const selected = derive(
    services,
    (ctx, svc) => ({
      service: `${svc.metadata.namespace}/${svc.metadata.name}`,
      pods: ctx
        .fetch(pods, { namespace: svc.metadata.namespace, labels: svc.spec.selector ?? {} })
        .map((p) => p.metadata.name),
    }),
    { keyOf: (s) => s.service },
  );
  assert.deepEqual(selected.get("ns1/web")?.pods, ["w1"]);
  assert.equal(recomputes(selected), 3);

  pods.upsert(pod("w3", "n", { app: "web" }, "ns1"));
  assert.equal(recomputes(selected), 4);
  assert.deepEqual(selected.get("ns1/web")?.pods, ["w1", "w3"]);

  // Relabelled from web to db: both services that saw it before or see it now recompute.
  pods.upsert(pod("w3", "n", { app: "db" }, "ns1"));
  assert.equal(recomputes(selected), 6);
  assert.deepEqual(selected.get("ns1/db")?.pods, ["d1", "w3"]);

  // A pod nobody selects recomputes nothing.
  pods.upsert(pod("other", "n", { app: "cache" }, "ns1"));
  assert.equal(recomputes(selected), 6);
});

test("selects filter: a workload change wakes the policies whose selector selects it", () => {
  interface Policy {
    metadata: Meta;
    spec: { selector?: { matchLabels: Record<string, string> } };
  }
  const policies = new StaticCollection<Policy>([
    { metadata: { name: "all", namespace: "ns" }, spec: {} },
    { metadata: { name: "web", namespace: "ns" }, spec: { selector: { matchLabels: { app: "web" } } } },
    { metadata: { name: "db", namespace: "ns" }, spec: { selector: { matchLabels: { app: "db" } } } },
  ]);
  const pods = new StaticCollection([pod("w1", "n", { app: "web" }, "ns")]);
  const applied = derive(
    pods,
    (ctx, p) => ({
      pod: p.metadata.name,
      policies: ctx
        .fetch(policies, { namespace: p.metadata.namespace, selects: p.metadata.labels ?? {} })
        .map((x) => x.metadata.name),
      strict: ctx
        .fetch(policies, { namespace: p.metadata.namespace, selectsNonEmpty: p.metadata.labels ?? {} })
        .map((x) => x.metadata.name),
    }),
    { keyOf: (a) => a.pod },
  );
  assert.deepEqual(applied.get("w1"), { pod: "w1", policies: ["all", "web"], strict: ["web"] });
  const before = recomputes(applied);
  policies.upsert({
    metadata: { name: "db", namespace: "ns" },
    spec: { selector: { matchLabels: { app: "db", v: "2" } } },
  });
  assert.equal(recomputes(applied), before);
  policies.upsert({ metadata: { name: "db", namespace: "ns" }, spec: { selector: { matchLabels: { app: "web" } } } });
  assert.equal(recomputes(applied), before + 1);
  assert.deepEqual(applied.get("w1")?.strict, ["web", "db"]);
});

test("a where-only fetch is checked against every change and recomputes only on a match", () => {
  const pods = new StaticCollection([pod("a", "n1"), pod("b", "n2")]);
  const watchers = new StaticCollection(["n1", "n2"]);
  const counts = derive(
    watchers,
    (ctx, nodeName) => ({ nodeName, pods: ctx.fetch(pods, { where: (p) => p.spec.nodeName === nodeName }).length }),
    { keyOf: (c) => c.nodeName },
  );
  pods.upsert(pod("c", "n2"));
  assert.equal(recomputes(counts), 3);
  assert.equal(counts.get("n2")?.pods, 2);
  assert.equal(counts.get("n1")?.pods, 1);
});

test("fetchOne with more than one match is a bug, recorded in debug output", () => {
  const pods = new StaticCollection([pod("a", "n1"), pod("b", "n1")]);
  const names = new StaticCollection(["n1"]);
  const found = derive(names, (ctx, n) => ctx.fetchOne(pods, { where: (p) => p.spec.nodeName === n })?.metadata.name);
  assert.equal(found.size, 0);
  assert.equal(found.debug().errors, 1);
  assert.match(found.debug().lastError ?? "", /^n1: krt: fetchOne on .* matched 2 objects$/);
});

test("a throwing transform keeps the input's last good output and retries when what it read changes", () => {
  const limits = new StaticCollection([{ metadata: { name: "limit" }, max: 10 }]);
  const sizes = new StaticCollection([{ metadata: { name: "s" }, size: 5 }]);
  const checked = derive(
    sizes,
    (ctx, s) => {
      const max = ctx.fetchOne(limits, { key: "limit" })?.max ?? 0;
      if (s.size > max) throw new Error(`size ${s.size} over ${max}`);
      return { name: s.metadata.name, size: s.size };
    },
    { keyOf: (c) => c.name },
  );
  const seen = collect(checked, false);
  sizes.upsert({ metadata: { name: "s" }, size: 20 });
  assert.deepEqual(checked.get("s"), { name: "s", size: 5 });
  assert.deepEqual(seen, []);
  assert.equal(checked.debug().lastError, "s: size 20 over 10");
  limits.upsert({ metadata: { name: "limit" }, max: 100 });
  assert.deepEqual(checked.get("s"), { name: "s", size: 20 });
  assert.equal(checked.debug().errors, 1);
});

test("handlers of a derived collection see one batch per source change, in order", () => {
  const pods = new StaticCollection<Pod>();
  const names = derive(pods, (_ctx, p) => p.metadata.name);
  const batches: string[][] = [];
  names.registerBatch((events) => batches.push(events.map((e) => `${e.type}:${e.new ?? e.old}`)), false);
  pods.upsert(pod("a", "n"), pod("b", "n"));
  pods.delete("default/a");
  pods.reset([pod("c", "n")]);
  assert.deepEqual(batches, [["add:a", "add:b"], ["delete:a"], ["delete:b", "add:c"]]);
});

test("a rerun keeps the routes it fetches again, drops the ones it no longer fetches, duplicates included", () => {
  interface Want {
    name: string;
    keys: string[];
  }
  const wants = new StaticCollection<Want>([{ name: "w", keys: ["a", "a", "b"] }], { keyOf: (w) => w.name });
  const values = new StaticCollection<{ key: string; value: number }>(
    [
      { key: "a", value: 1 },
      { key: "b", value: 2 },
    ],
    { keyOf: (v) => v.key },
  );
  let runs = 0;
  const sums = derive(
    wants,
    (ctx, w) => {
      runs++;
      let sum = 0;
      for (const key of w.keys) sum += ctx.fetchOne(values, { key })?.value ?? 0;
      return { name: w.name, sum };
    },
    { keyOf: (s) => s.name },
  );
  assert.equal(sums.get("w")?.sum, 4);
  // Fetching "a" once only now (the duplicate gone) and "b" no longer.
  wants.upsert({ name: "w", keys: ["a"] });
  assert.equal(sums.get("w")?.sum, 1);
  values.upsert({ key: "a", value: 10 });
  assert.equal(sums.get("w")?.sum, 10, "a change of what it still fetches reruns it");
  const before = runs;
  values.upsert({ key: "b", value: 20 });
  assert.equal(runs, before, "a change of what it no longer fetches does not");
  // The same fetches again, reordered: every one still routes.
  wants.upsert({ name: "w", keys: ["b", "a"] });
  values.upsert({ key: "b", value: 30 });
  assert.equal(sums.get("w")?.sum, 40);
});
