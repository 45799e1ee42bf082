import assert from "node:assert/strict";
import { test } from "node:test";
import { OverlayMap } from "./overlay-map.ts";

test("an overlay map reads its changes over a base it never changes", () => {
  const base = new Map([
    ["a", 1],
    ["b", 2],
  ]);
  const m = new OverlayMap(base);
  assert.ok(m.unchanged);
  assert.equal(m.base, base);
  m.set("a", 10);
  m.set("c", 3);
  m.set("b", undefined);
  assert.deepEqual(
    [...m],
    [
      ["a", 10],
      ["c", 3],
    ],
  );
  assert.equal(m.size, 2);
  assert.equal(m.has("b"), false);
  assert.equal(m.get("a"), 10);
  assert.deepEqual(
    [...base],
    [
      ["a", 1],
      ["b", 2],
    ],
  );
  // Setting what the base says is no change.
  m.set("a", 1);
  m.set("b", 2);
  m.set("c", undefined);
  assert.ok(m.unchanged);
  assert.equal(m.size, 2);
  m.set("d", undefined); // removing what is not there
  assert.equal(m.size, 2);
  m.reset(new Map([["z", 26]]));
  assert.deepEqual([...m.keys()], ["z"]);
  assert.equal(m.size, 1);
});

test("many changes fold into a base of the holder's own", () => {
  const base = new Map(Array.from({ length: 40 }, (_, i) => [`n${i}`, i]));
  const m = new OverlayMap(base);
  for (let i = 0; i < 33; i++) m.set(`n${i}`, 100 + i);
  assert.ok(m.unchanged, "folded");
  assert.notEqual(m.base, base);
  assert.equal(m.size, 40);
  assert.equal(m.get("n5"), 105);
  assert.equal(base.get("n5"), 5);
});
