import assert from "node:assert/strict";
import { test } from "node:test";
import { hostSubsetOf, hostsMatch, isWildcard } from "./hosts.ts";

test("a wildcard is a name starting with *", () => {
  assert.ok(isWildcard("*"));
  assert.ok(isWildcard("*.example.com"));
  assert.ok(!isWildcard("a.example.com"));
  assert.ok(!isWildcard("a.*.com"));
});

test("SubsetOf: a host is within an equal host or a covering wildcard, a wildcard never within an exact host", () => {
  assert.equal(hostSubsetOf("a.example.com", "*.example.com"), true);
  assert.equal(hostSubsetOf("*.a.example.com", "*.example.com"), true);
  assert.equal(hostSubsetOf("*.example.com", "a.example.com"), false);
  assert.equal(hostSubsetOf("*.example.com", "*.a.example.com"), false);
  assert.equal(hostSubsetOf("*.com", "*.foo.com"), false);
  assert.equal(hostSubsetOf("anything", "*"), true);
  assert.equal(hostSubsetOf("a.example.com", "a.example.com"), true);
});

test("Matches is symmetric: either side may be the wider wildcard", () => {
  assert.equal(hostsMatch("*.example.com", "a.example.com"), true);
  assert.equal(hostsMatch("a.example.com", "*.example.com"), true);
  assert.equal(hostsMatch("*.a.example.com", "*.example.com"), true);
  assert.equal(hostsMatch("*.example.com", "*.a.example.com"), true);
  assert.equal(hostsMatch("*", "anything.io"), true);
  assert.equal(hostsMatch("a.example.com", "b.example.com"), false);
  assert.equal(hostsMatch("*.example.com", "example.org"), false);
  assert.equal(hostsMatch("*.a.example.com", "*.b.example.com"), false);
  assert.equal(hostsMatch("*.com", "*.foo.com"), true);
});
