import assert from "node:assert/strict";
import { test } from "node:test";
import type { Event } from "./collection.ts";
import { derive } from "./derived.ts";
import { singleton, staticSingleton } from "./singleton.ts";
import { StaticCollection } from "./static.ts";

test("a singleton over a whole collection recomputes once per change, however many objects changed", () => {
  const names = new StaticCollection(["a", "b"]);
  const count = singleton((ctx) => ctx.fetch(names).length);
  assert.equal(count.get(), 2);
  const derived = count.asCollection();
  assert.equal(derived.debug().recomputes, 1);
  names.upsert("c", "d", "e");
  assert.equal(count.get(), 5);
  assert.equal(derived.debug().recomputes, 2);
  names.delete("a");
  assert.equal(derived.debug().recomputes, 3);
  names.upsert("b");
  assert.equal(derived.debug().recomputes, 3);
});

test("a singleton emits add, then update only when its value changes, then delete when it becomes undefined", () => {
  const names = new StaticCollection(["a"]);
  const first = singleton((ctx) => ctx.fetch(names)[0]?.toUpperCase());
  const seen: Event<string>[] = [];
  first.register((event) => seen.push(event));
  names.upsert("b");
  names.reset(["c"]);
  names.reset([]);
  assert.deepEqual(seen, [
    { type: "add", new: "A" },
    { type: "update", old: "A", new: "C" },
    { type: "delete", old: "C" },
  ]);
  assert.equal(first.get(), undefined);
});

test("a static singleton is set from outside; derived collections fetching it follow it", () => {
  const mesh = staticSingleton({ domain: "cluster.local" });
  const services = new StaticCollection(["a.ns", "b.ns"]);
  const hosts = derive(services, (ctx, name) => `${name}.svc.${ctx.fetchOne(mesh.asCollection())?.domain}`);
  assert.deepEqual(hosts.list(), ["a.ns.svc.cluster.local", "b.ns.svc.cluster.local"]);
  mesh.set({ domain: "cluster.local" });
  assert.equal(hosts.debug().recomputes, 2);
  mesh.set({ domain: "example.org" });
  assert.deepEqual(hosts.list(), ["a.ns.svc.example.org", "b.ns.svc.example.org"]);
  mesh.set(undefined);
  assert.equal(mesh.get(), undefined);
  assert.deepEqual(hosts.list(), ["a.ns.svc.undefined", "b.ns.svc.undefined"]);
});
