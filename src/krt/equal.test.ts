import assert from "node:assert/strict";
import { test } from "node:test";
import { deepEqual } from "./equal.ts";

test("plain objects and arrays compare by content, regardless of key order", () => {
  assert.equal(deepEqual({ a: 1, b: [1, { c: "x" }] }, { b: [1, { c: "x" }], a: 1 }), true);
  assert.equal(deepEqual({ a: 1 }, { a: 2 }), false);
  assert.equal(deepEqual({ a: 1 }, { a: 1, b: undefined }), false);
  assert.equal(deepEqual({ a: undefined }, { b: undefined }), false);
  assert.equal(deepEqual([1, 2], [1, 2, 3]), false);
  assert.equal(deepEqual([], {}), false);
  assert.equal(deepEqual({ 0: 1, length: 1 }, [1]), false);
  assert.equal(deepEqual(null, {}), false);
  assert.equal(deepEqual(Number.NaN, Number.NaN), true);
});

test("maps, sets, dates and byte arrays compare by content too", () => {
  assert.equal(deepEqual(new Map([["a", { x: 1 }]]), new Map([["a", { x: 1 }]])), true);
  assert.equal(deepEqual(new Map([["a", 1]]), new Map([["a", 2]])), false);
  assert.equal(deepEqual(new Set([1, 2]), new Set([2, 1])), true);
  assert.equal(deepEqual(new Date(1), new Date(2)), false);
  assert.equal(deepEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2])), true);
  assert.equal(deepEqual(new Uint8Array([1, 2]), { 0: 1, 1: 2 }), false);
});
