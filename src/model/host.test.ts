import assert from "node:assert/strict";
import { test } from "node:test";
import { mostSpecificHostMatch, resolveGatewayName, resolveShortName } from "./host.ts";

test("most specific match: exact, else the longest covering wildcard", () => {
  const keys = ["*", "*.com", "*.example.com", "api.example.com"];
  assert.equal(mostSpecificHostMatch("api.example.com", keys), "api.example.com");
  assert.equal(mostSpecificHostMatch("www.example.com", keys), "*.example.com");
  assert.equal(mostSpecificHostMatch("*.x.example.com", keys), "*.example.com");
  assert.equal(mostSpecificHostMatch("foo.org", keys), "*");
  assert.equal(mostSpecificHostMatch("foo.org", ["*.com"]), undefined);
});

test("short names are qualified in their namespace; *, IPs and dotted names are kept", () => {
  assert.equal(resolveShortName("reviews", "bookinfo", "cluster.local"), "reviews.bookinfo.svc.cluster.local");
  assert.equal(resolveShortName("reviews.other", "bookinfo", "cluster.local"), "reviews.other");
  assert.equal(resolveShortName("*", "bookinfo", "cluster.local"), "*");
  assert.equal(resolveShortName("10.0.0.1", "bookinfo", "cluster.local"), "10.0.0.1");
  assert.equal(resolveShortName("fd00::1", "bookinfo", "cluster.local"), "fd00::1");
});

test("gateway references: short, ./, ns/ and the legacy FQDN form", () => {
  assert.equal(resolveGatewayName("gw", "bookinfo"), "bookinfo/gw");
  assert.equal(resolveGatewayName("./gw", "bookinfo"), "bookinfo/gw");
  assert.equal(resolveGatewayName("istio-system/gw", "bookinfo"), "istio-system/gw");
  assert.equal(resolveGatewayName("gw.istio-system.svc.cluster.local", "bookinfo"), "istio-system/gw");
  assert.equal(resolveGatewayName("gw.istio-system", "bookinfo"), "istio-system/gw");
  assert.equal(resolveGatewayName("mesh", "bookinfo"), "mesh");
});
