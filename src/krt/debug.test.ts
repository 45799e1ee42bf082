import assert from "node:assert/strict";
import { test } from "node:test";
import { DebugRegistry } from "./debug.ts";
import { derive } from "./derived.ts";
import { StaticCollection } from "./static.ts";

test("the debug registry lists each collection with its size, dependencies and recompute count", () => {
  const debug = new DebugRegistry();
  const nodes = new StaticCollection([{ metadata: { name: "n1" }, zone: "z1" }], { name: "nodes", debug });
  const pods = new StaticCollection(["p1/n1", "p2/n1", "p3/n2"], { name: "pods", debug });
  const zones = derive(pods, (ctx, p) => `${p}@${ctx.fetchOne(nodes, { key: p.split("/")[1] })?.zone ?? "?"}`, {
    name: "pod-zones",
    debug,
  });
  zones.register(() => {});
  nodes.upsert({ metadata: { name: "n1" }, zone: "z2" });
  assert.deepEqual(debug.snapshot(), [
    { name: "nodes", size: 1, dependencies: [], recomputes: 0, errors: 0, handlers: 1, indexes: [] },
    { name: "pods", size: 3, dependencies: [], recomputes: 0, errors: 0, handlers: 1, indexes: [] },
    { name: "pod-zones", size: 3, dependencies: ["pods", "nodes"], recomputes: 5, errors: 0, handlers: 1, indexes: [] },
  ]);
});

test("the debug snapshot carries the objects when asked", () => {
  const debug = new DebugRegistry();
  new StaticCollection(["a", "b"], { name: "names", debug });
  assert.equal(debug.snapshot()[0].items, undefined);
  assert.deepEqual(debug.snapshot({ items: true })[0].items, ["a", "b"]);
});
