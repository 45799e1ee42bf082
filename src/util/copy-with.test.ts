import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { copyWith } from "./copy-with.ts";

test("lays the values over a copy: the object's keys in their order, then the new ones", () => {
  const obj = { a: 1, b: 2, c: 3 };
  const copy = copyWith(obj, { d: 4, b: 20 });
  assert.deepEqual(Object.entries(copy), Object.entries({ ...obj, d: 4, b: 20 }));
  assert.deepEqual(Object.keys(copy), ["a", "b", "c", "d"]);
  assert.deepEqual(obj, { a: 1, b: 2, c: 3 }, "the object itself is left as it was");
  assert.notEqual(copy, obj);
});

test("an undefined value is kept as a property, as a spread keeps it", () => {
  const copy = copyWith({ a: 1 }, { b: undefined });
  assert.ok(Object.hasOwn(copy, "b"));
  assert.deepEqual(copy, { a: 1, b: undefined });
});

test("a __proto__ key from JSON stays an own property and leaves the prototype alone", () => {
  const obj = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
  const copy = copyWith(obj, { b: 2 }) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.equal(copy.polluted, undefined);
  assert.deepEqual(Object.keys(copy), ["__proto__", "a", "b"]);
  assert.deepEqual(Object.getOwnPropertyDescriptor(copy, "__proto__")?.value, { polluted: true });
});

test("copies of one shape share a hidden class, frozen or not (a spread gives each its own on Node 20)", () => {
  const haveSameMap = sameHiddenClass();
  const spreads = Array.from({ length: 50 }, (_, i) => ({ ...JSON.parse(`{"name":"p${i}","uid":"u"}`), kind: "Pod" }));
  assert.ok(
    !spreads.every((c) => haveSameMap(c, spreads[0])),
    "a spread's copies have hidden classes of their own (if V8 now shares them, spreads can replace copyWith)",
  );
  const copies = Array.from({ length: 50 }, (_, i) =>
    copyWith(JSON.parse(`{"name":"p${i}","uid":"u"}`), { kind: "Pod" }),
  );
  assert.ok(copies.every((c) => haveSameMap(c, copies[0])));
  for (const c of copies) Object.freeze(c);
  assert.ok(copies.every((c) => haveSameMap(c, copies[0])));
});

/** V8's %HaveSameMap (natives syntax is allowed for the function it compiles). */
function sameHiddenClass(): (a: object, b: object) => boolean {
  setFlagsFromString("--allow-natives-syntax");
  const haveSameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;
  setFlagsFromString("--no-allow-natives-syntax");
  return haveSameMap;
}
