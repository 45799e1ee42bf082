import assert from "node:assert/strict";
import { test } from "node:test";
import { hostSubsetOf, hostsMatch, intersectHosts } from "./hostnames.ts";

test("hostsMatch is a two-way wildcard match", () => {
  assert.ok(hostsMatch("*.example.com", "a.example.com"));
  assert.ok(hostsMatch("a.example.com", "*.example.com"));
  assert.ok(hostsMatch("*.example.com", "*.a.example.com"));
  assert.ok(hostsMatch("*", "anything.io"));
  assert.ok(!hostsMatch("a.example.com", "b.example.com"));
  assert.ok(!hostsMatch("*.example.com", "example.org"));
});

test("hostSubsetOf: a wildcard is never a subset of a plain name", () => {
  assert.ok(hostSubsetOf("a.example.com", "*.example.com"));
  assert.ok(hostSubsetOf("*.a.example.com", "*.example.com"));
  assert.ok(!hostSubsetOf("*.example.com", "a.example.com"));
  assert.ok(!hostSubsetOf("*.example.com", "*.a.example.com"));
});

test("intersectHosts keeps the narrower host of each overlapping pair, once", () => {
  assert.deepEqual(intersectHosts(["*.com"], ["*.example.com"]), ["*.example.com"]);
  assert.deepEqual(intersectHosts(["a.example.com", "b.org"], ["*.example.com"]), ["a.example.com"]);
  assert.deepEqual(intersectHosts(["a.example.com", "a.example.com"], ["*"]), ["a.example.com"]);
});
