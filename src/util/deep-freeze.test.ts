import assert from "node:assert/strict";
import { test } from "node:test";
import { deepFreeze } from "./deep-freeze.ts";

test("deepFreeze freezes every object and array reachable, and returns its argument", () => {
  const value = { a: { b: [1, { c: "x" }] }, d: null, e: "s" };
  assert.equal(deepFreeze(value), value);
  assert.ok(Object.isFrozen(value));
  assert.ok(Object.isFrozen(value.a));
  assert.ok(Object.isFrozen(value.a.b));
  assert.ok(Object.isFrozen(value.a.b[1]));
  assert.equal(deepFreeze("text"), "text");
  assert.equal(deepFreeze(null), null);
});

test("deepFreeze does not walk into an object already frozen", () => {
  const inner = { mutable: { n: 1 } };
  Object.freeze(inner);
  deepFreeze({ inner });
  assert.ok(!Object.isFrozen(inner.mutable));
});
