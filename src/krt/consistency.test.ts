// Incremental results must equal a rebuild from scratch: random changes to a registry-shaped graph,
// checked after every change against a fresh graph built from the same sources, and against the
// state a handler reconstructs from the events it was sent.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Collection } from "./collection.ts";
import { derive, deriveMany } from "./derived.ts";
import { index } from "./indexes.ts";
import { join } from "./join.ts";
import { batch } from "./scheduler.ts";
import { singleton } from "./singleton.ts";
import { StaticCollection } from "./static.ts";

interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
}
interface Node {
  metadata: Meta;
  zone: string;
}
interface Pod {
  metadata: Meta;
  nodeName: string;
}
interface Service {
  metadata: Meta;
  spec: { selector: Record<string, string>; ports: number[] };
}
interface Slice {
  metadata: Meta;
  ips: string[];
}

interface Sources {
  nodes: StaticCollection<Node>;
  pods: StaticCollection<Pod>;
  services: StaticCollection<Service>;
  slices: StaticCollection<Slice>;
}

const SERVICE_LABEL = "kubernetes.io/service-name";

function build(sources: Sources) {
  const { nodes, pods, services, slices } = sources;
  const workloads = derive(pods, (ctx, pod) => ({
    metadata: pod.metadata,
    zone: ctx.fetchOne(nodes, { key: pod.nodeName })?.zone,
  }));
  const slicesByService = index(slices, (s) => {
    const service = s.metadata.labels?.[SERVICE_LABEL];
    return service === undefined ? [] : [`${s.metadata.namespace}/${service}`];
  });
  const endpoints = derive(
    services,
    (ctx, svc) => {
      const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
      const selected = ctx.fetch(workloads, { namespace: svc.metadata.namespace, labels: svc.spec.selector });
      return {
        key,
        pods: selected.map((w) => `${w.metadata.name}@${w.zone ?? "?"}`).sort(),
        ips: ctx
          .fetchIndex(slicesByService, key)
          .flatMap((s) => s.ips)
          .sort(),
      };
    },
    { keyOf: (e) => e.key },
  );
  const ports = deriveMany(services, (_ctx, svc) =>
    svc.spec.ports.map((port) => `${svc.metadata.namespace}/${svc.metadata.name}:${port}`),
  );
  const zones = singleton((ctx) => [...new Set(ctx.fetch(workloads).map((w) => w.zone ?? "?"))].sort());
  const everything = join<{ metadata: Meta }>([workloads, services]);
  return { workloads, endpoints, ports, zones: zones.asCollection(), everything };
}

type Graph = ReturnType<typeof build>;

function snapshot(collection: Collection<unknown>): Map<string, unknown> {
  return new Map(collection.list().map((item) => [collection.keyOf(item), item]));
}

/** Applies every event to a map and checks each is consistent with what came before. */
function mirror(collection: Collection<unknown>): Map<string, unknown> {
  const seen = new Map<string, unknown>();
  collection.register((event) => {
    const key = collection.keyOf(event.type === "delete" ? event.old : event.new);
    if (event.type === "add") assert.equal(seen.has(key), false, `add of present ${key}`);
    else assert.deepEqual(seen.get(key), event.old, `${event.type} of ${key} with a stale old`);
    if (event.type === "update") assert.notDeepEqual(event.old, event.new, `update of ${key} with equal objects`);
    if (event.type === "delete") seen.delete(key);
    else seen.set(key, event.new);
  });
  return seen;
}

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

test("random changes: every derived collection equals a rebuild, and its events replay to its state", () => {
  const next = random(42);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const namespaces = ["ns1", "ns2"];
  const apps = ["web", "db", "cache"];
  const nodeNames = ["n1", "n2", "n3", "n4"];

  const makeNode = (): Node => ({ metadata: { name: pick(nodeNames) }, zone: pick(["z1", "z2", "z3"]) });
  const makePod = (): Pod => ({
    metadata: { name: `p${Math.floor(next() * 30)}`, namespace: pick(namespaces), labels: { app: pick(apps) } },
    nodeName: pick(nodeNames),
  });
  const makeService = (): Service => ({
    metadata: { name: pick(apps), namespace: pick(namespaces) },
    spec: { selector: { app: pick(apps) }, ports: next() < 0.5 ? [80] : [80, 443] },
  });
  const makeSlice = (): Slice => ({
    metadata: {
      name: `s${Math.floor(next() * 10)}`,
      namespace: pick(namespaces),
      labels: { [SERVICE_LABEL]: pick(apps) },
    },
    ips: [`10.0.${Math.floor(next() * 4)}.1`],
  });

  const sources: Sources = {
    nodes: new StaticCollection<Node>(),
    pods: new StaticCollection<Pod>(),
    services: new StaticCollection<Service>(),
    slices: new StaticCollection<Slice>(),
  };
  const graph = build(sources);
  const names = Object.keys(graph) as (keyof Graph)[];
  const mirrors = new Map(names.map((name) => [name, mirror(graph[name])]));

  const deleteOne = <T>(source: StaticCollection<T>): void => {
    const present = source.list();
    if (present.length > 0) source.delete(source.keyOf(pick(present)));
  };
  const changes = [
    () => sources.nodes.upsert(makeNode()),
    () => sources.pods.upsert(makePod()),
    () => sources.services.upsert(makeService()),
    () => sources.slices.upsert(makeSlice()),
    () => deleteOne(sources.nodes),
    () => deleteOne(sources.pods),
    () => deleteOne(sources.services),
    () => deleteOne(sources.slices),
  ];
  // Upserts three times as often as deletes, so the graph fills up.
  const change = (): void => (next() < 0.75 ? pick(changes.slice(0, 4)) : pick(changes.slice(4)))();

  for (let step = 0; step < 400; step++) {
    if (next() < 0.1) batch(() => [change(), change(), change()]);
    else change();

    const fresh = build({
      nodes: new StaticCollection(sources.nodes.list()),
      pods: new StaticCollection(sources.pods.list()),
      services: new StaticCollection(sources.services.list()),
      slices: new StaticCollection(sources.slices.list()),
    });
    for (const name of names) {
      const current = snapshot(graph[name]);
      assert.deepEqual(current, snapshot(fresh[name]), `${name} after step ${step}`);
      assert.deepEqual(mirrors.get(name), current, `${name} events after step ${step}`);
    }
  }
  assert.ok(graph.endpoints.size > 0 && graph.workloads.size > 0);
});
