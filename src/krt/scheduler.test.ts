import assert from "node:assert/strict";
import { test } from "node:test";
import type { Collection } from "./collection.ts";
import { derive } from "./derived.ts";
import { batch } from "./scheduler.ts";
import { singleton } from "./singleton.ts";
import { StaticCollection } from "./static.ts";

interface Value {
  name: string;
  value: number;
}

const byName = { keyOf: (v: Value) => v.name };

function scaled(input: Collection<Value>, factor: number): Collection<Value> {
  return derive(input, (_ctx, v) => ({ name: v.name, value: v.value * factor }), byName);
}

test("a diamond: a singleton reading two collections derived from one source recomputes once, from settled inputs", () => {
  const source = new StaticCollection([{ name: "x", value: 1 }], byName);
  const doubled = scaled(source, 2);
  const tripled = scaled(source, 3);
  const sum = singleton((ctx) => {
    const values = [...ctx.fetch(doubled), ...ctx.fetch(tripled)];
    return values.reduce((total, v) => total + v.value, 0);
  });
  const seen: number[] = [];
  sum.register((event) => seen.push(event.type === "delete" ? Number.NaN : event.new));
  source.upsert({ name: "x", value: 10 });
  assert.deepEqual(seen, [5, 50]);
  assert.equal(sum.asCollection().debug().recomputes, 2);
});

test("a collection fetching a sibling derived from the same source sees the sibling already updated", () => {
  const source = new StaticCollection([{ name: "x", value: 1 }], byName);
  const doubled = scaled(source, 2);
  const pairs = derive(
    source,
    (ctx, v) => ({ name: v.name, value: v.value, doubled: ctx.fetchOne(doubled, { key: v.name })?.value }),
    { keyOf: (p) => p.name },
  );
  const seen: unknown[] = [];
  pairs.registerBatch((events) => seen.push(...events.map((e) => e.new)), false);
  source.upsert({ name: "x", value: 5 });
  assert.deepEqual(seen, [{ name: "x", value: 5, doubled: 10 }]);
  assert.equal(pairs.debug().recomputes, 2);
});

test("batch: updates to several sources reach derived collections together, when the batch ends", () => {
  const left = new StaticCollection([{ name: "a", value: 1 }], byName);
  const right = new StaticCollection([{ name: "b", value: 1 }], byName);
  const total = singleton((ctx) => [...ctx.fetch(left), ...ctx.fetch(right)].reduce((t, v) => t + v.value, 0));
  const inside = batch(() => {
    left.upsert({ name: "a", value: 2 });
    right.upsert({ name: "b", value: 3 });
    return total.get();
  });
  assert.equal(inside, 2);
  assert.equal(total.get(), 5);
  assert.equal(total.asCollection().debug().recomputes, 2);
});

test("a change a handler makes during propagation has settled when the outermost update returns", () => {
  const requests = new StaticCollection<string>();
  const replies = new StaticCollection<string>();
  const seenReplies = derive(replies, (_ctx, r) => r.toUpperCase());
  derive(requests, (_ctx, r) => r).register((event) => {
    if (event.type === "add") replies.upsert(`re-${event.new}`);
  });
  requests.upsert("hello");
  assert.deepEqual(seenReplies.list(), ["RE-HELLO"]);
});

test("a collection fetching one created after it still converges", () => {
  const source = new StaticCollection([{ name: "x", value: 1 }], byName);
  const holder: { later?: Collection<Value> } = {};
  const early = derive(
    source,
    (ctx, v) => ({
      name: v.name,
      value: holder.later ? (ctx.fetchOne(holder.later, { key: v.name })?.value ?? -1) : 0,
    }),
    byName,
  );
  holder.later = scaled(source, 7);
  source.upsert({ name: "x", value: 2 });
  assert.deepEqual(early.get("x"), { name: "x", value: 14 });
  source.upsert({ name: "x", value: 3 });
  assert.deepEqual(early.get("x"), { name: "x", value: 21 });
});

test("a throwing handler reaches the caller only after every other handler and collection got the change", () => {
  const source = new StaticCollection([{ name: "x", value: 1 }], byName);
  const doubled = scaled(source, 2);
  const tripled = scaled(source, 3);
  doubled.register((event) => {
    if (event.new?.value === 10) throw new Error("handler bug");
  });
  const seen: number[] = [];
  doubled.register((event) => seen.push(event.new?.value ?? 0));
  assert.throws(() => source.upsert({ name: "x", value: 5 }), /handler bug/);
  assert.deepEqual(seen, [2, 10]);
  assert.equal(tripled.get("x")?.value, 15);
  source.upsert({ name: "x", value: 6 });
  assert.deepEqual(seen, [2, 10, 12]);
  assert.equal(tripled.get("x")?.value, 18);
});
