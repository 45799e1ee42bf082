import assert from "node:assert/strict";
import { test } from "node:test";
import { intersectHosts } from "./hostnames.ts";

test("intersectHosts keeps the narrower host of each overlapping pair, once", () => {
  assert.deepEqual(intersectHosts(["*.com"], ["*.example.com"]), ["*.example.com"]);
  assert.deepEqual(intersectHosts(["a.example.com", "b.org"], ["*.example.com"]), ["a.example.com"]);
  assert.deepEqual(intersectHosts(["a.example.com", "a.example.com"], ["*"]), ["a.example.com"]);
});
