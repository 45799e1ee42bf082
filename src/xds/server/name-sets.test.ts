import assert from "node:assert/strict";
import { test } from "node:test";
import { TypeUrl } from "../types.ts";
import { Watch } from "./connection.ts";
import { sharedNameSet } from "./name-sets.ts";

const EDS = TypeUrl.Endpoint;

test("watches naming the same names in the same order share one set", () => {
  const names = ["outbound|80||a.ns.svc.cluster.local", "outbound|80||b.ns.svc.cluster.local"];
  const first = new Watch(EDS, names);
  const second = new Watch(EDS, [...names]);
  assert.equal(second.resourceNames, first.resourceNames);
  assert.deepEqual([...second.resourceNames], names);
  const reordered = new Watch(EDS, [...names].reverse());
  assert.notEqual(reordered.resourceNames, first.resourceNames, "the order is part of a set (EDS answers in it)");
  second.resourceNames = new Set([names[0]]);
  assert.deepEqual([...first.resourceNames], names, "replacing one watch's names leaves the others'");
});

test("a set of names not held yet is kept as given", () => {
  const names = new Set(["x", "y\nz"]);
  assert.equal(sharedNameSet(names), names);
  assert.notEqual(sharedNameSet(new Set(["x", "y", "z"])), names, "names are not split on a separator");
  assert.equal(sharedNameSet(new Set(["x", "y\nz"])), names);
});
