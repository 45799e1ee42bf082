import assert from "node:assert/strict";
import { test } from "node:test";
import type { Event } from "./collection.ts";
import { StaticCollection } from "./static.ts";

interface Config {
  metadata: { name: string; namespace?: string };
  value: number;
}

function config(name: string, value: number, namespace = "default"): Config {
  return { metadata: { name, namespace }, value };
}

function record<T>(events: Event<T>[][]): (batch: readonly Event<T>[]) => void {
  return (batch) => {
    events.push([...batch]);
  };
}

test("objects are keyed ns/name, strings by themselves", () => {
  const configs = new StaticCollection([config("a", 1), config("b", 2, "other")]);
  assert.deepEqual(configs.get("default/a"), config("a", 1));
  assert.deepEqual(configs.get("other/b"), config("b", 2, "other"));
  assert.equal(configs.size, 2);
  const names = new StaticCollection(["x", "y"]);
  assert.equal(names.get("y"), "y");
  assert.deepEqual(names.list(), ["x", "y"]);
});

test("an object without a key and no keyOf is a programming error", () => {
  assert.throws(() => new StaticCollection([{ value: 1 }]), /cannot derive a key/);
});

test("upsert, update and delete reach a handler as add, update, delete", () => {
  const configs = new StaticCollection<Config>();
  const seen: Event<Config>[] = [];
  configs.register((event) => seen.push(event));
  configs.upsert(config("a", 1));
  configs.upsert(config("a", 2));
  configs.delete("default/a");
  configs.delete("default/missing");
  assert.deepEqual(seen, [
    { type: "add", new: config("a", 1) },
    { type: "update", old: config("a", 1), new: config("a", 2) },
    { type: "delete", old: config("a", 2) },
  ]);
  assert.equal(configs.get("default/a"), undefined);
});

test("upserting an equal object emits nothing", () => {
  const configs = new StaticCollection([config("a", 1)]);
  const batches: Event<Config>[][] = [];
  configs.registerBatch(record(batches), false);
  configs.upsert(config("a", 1));
  assert.deepEqual(batches, []);
});

test("a custom equals decides what counts as a change", () => {
  const configs = new StaticCollection([config("a", 1)], { equals: (x, y) => x.value % 10 === y.value % 10 });
  const batches: Event<Config>[][] = [];
  configs.registerBatch(record(batches), false);
  configs.upsert(config("a", 11));
  assert.deepEqual(batches, []);
  configs.upsert(config("a", 12));
  assert.equal(batches.length, 1);
});

test("register replays existing objects; registerBatch without runExistingState does not", () => {
  const configs = new StaticCollection([config("a", 1), config("b", 2)]);
  const replayed: Event<Config>[][] = [];
  const quiet: Event<Config>[][] = [];
  configs.registerBatch(record(replayed), true);
  configs.registerBatch(record(quiet), false);
  assert.deepEqual(replayed, [
    [
      { type: "add", new: config("a", 1) },
      { type: "add", new: config("b", 2) },
    ],
  ]);
  assert.deepEqual(quiet, []);
});

test("an unregistered handler hears nothing more", () => {
  const configs = new StaticCollection<Config>();
  const seen: Event<Config>[] = [];
  const unregister = configs.register((event) => seen.push(event));
  configs.upsert(config("a", 1));
  unregister();
  configs.upsert(config("b", 1));
  assert.equal(seen.length, 1);
  assert.equal(configs.debug().handlers, 0);
});

test("update applies upserts and deletes as one batch", () => {
  const configs = new StaticCollection([config("a", 1), config("b", 1)]);
  const batches: Event<Config>[][] = [];
  configs.registerBatch(record(batches), false);
  configs.update({ upsert: [config("c", 1), config("b", 2)], delete: ["default/a"] });
  assert.deepEqual(batches, [
    [
      { type: "add", new: config("c", 1) },
      { type: "update", old: config("b", 1), new: config("b", 2) },
      { type: "delete", old: config("a", 1) },
    ],
  ]);
});

test("reset deletes what is absent and changes only what differs, in one batch", () => {
  const configs = new StaticCollection([config("a", 1), config("b", 1), config("c", 1)]);
  const batches: Event<Config>[][] = [];
  configs.registerBatch(record(batches), false);
  configs.reset([config("b", 1), config("c", 2), config("d", 1)]);
  assert.deepEqual(batches, [
    [
      { type: "delete", old: config("a", 1) },
      { type: "update", old: config("c", 1), new: config("c", 2) },
      { type: "add", new: config("d", 1) },
    ],
  ]);
  assert.deepEqual(
    configs.list().map((c) => c.metadata.name),
    ["b", "c", "d"],
  );
});

test("a change made by a handler reaches every handler after the change that caused it", () => {
  const names = new StaticCollection<string>();
  const first: string[] = [];
  const second: string[] = [];
  names.register((event) => {
    first.push(`${event.type}:${event.new}`);
    if (event.new === "x") names.upsert("y");
  });
  names.register((event) => second.push(`${event.type}:${event.new}`));
  names.upsert("x");
  assert.deepEqual(first, ["add:x", "add:y"]);
  assert.deepEqual(second, ["add:x", "add:y"]);
});

test("a handler registered during delivery gets current state once, not the batches queued before it", () => {
  const names = new StaticCollection<string>();
  const late: string[] = [];
  names.register((event) => {
    if (event.new === "x") {
      names.upsert("y");
      names.register((e) => late.push(`${e.type}:${e.new}`));
    }
  });
  names.upsert("x");
  names.upsert("z");
  assert.deepEqual(late, ["add:x", "add:y", "add:z"]);
});
