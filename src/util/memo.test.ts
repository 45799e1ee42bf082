import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoStore, mapTable, NO_MEMOS, weakTable } from "./memo.ts";

const WEAK = weakTable<object, string>("test/weak");
const MAP = mapTable<string, number>("test/map");

test("a MemoStore keeps one table per descriptor and counts its entries, hits and misses", () => {
  const memos = new MemoStore();
  const key = {};
  const weak = memos.weak(WEAK);
  assert.equal(memos.weak(WEAK), weak);
  assert.equal(weak.get(key), undefined);
  weak.set(key, "a");
  weak.set(key, "b");
  assert.equal(weak.get(key), "b");
  const map = memos.map(MAP);
  map.set("x", 1);
  assert.equal(map.get("x"), 1);
  assert.equal(map.get("y"), undefined);
  assert.deepEqual(memos.memoStats(), [
    { name: "test/map", kind: "map", entries: 1, hits: 1, misses: 1 },
    { name: "test/weak", kind: "weak", entries: 1, hits: 1, misses: 1 },
  ]);
  // Another store has tables of its own.
  assert.notEqual(new MemoStore().weak(WEAK), weak);
});

test("NO_MEMOS keeps nothing", () => {
  const key = {};
  NO_MEMOS.weak(WEAK).set(key, "a");
  assert.equal(NO_MEMOS.weak(WEAK).get(key), undefined);
  NO_MEMOS.map(MAP).set("x", 1);
  assert.equal(NO_MEMOS.map(MAP).get("x"), undefined);
});
