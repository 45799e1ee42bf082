import assert from "node:assert/strict";
import { test } from "node:test";
import { runGoldenCase, vhostNamed } from "../../../test/support/route-cases.ts";
import { cors, unpackAny } from "../../api/index.ts";

function policies() {
  const routes = vhostNamed(runGoldenCase("cors").get("80"), "web.default.svc.cluster.local:80").routes;
  return routes.map((r) => {
    const any = r.typedPerFilterConfig["envoy.filters.http.cors"];
    assert.ok(any, `route ${r.name} has a CORS policy`);
    return unpackAny(any, cors.CorsPolicySchema);
  });
}

test("cors golden: origins as string matchers, lists comma-joined, max_age in seconds, credentials", () => {
  const p = policies()[0];
  assert.deepEqual(
    p?.allowOriginStringMatch.map((m) => m.matchPattern.case),
    ["exact", "safeRegex"],
  );
  assert.equal(p?.allowMethods, "GET,POST");
  assert.equal(p?.allowHeaders, "x-custom,authorization");
  assert.equal(p?.exposeHeaders, "x-request-id");
  assert.equal(p?.maxAge, "86400");
  assert.equal(p?.allowCredentials, true);
  assert.equal(p?.filterEnabled?.defaultValue?.numerator, 100);
});

test("unmatchedPreflights IGNORE stops forwarding unmatched preflights; otherwise they are forwarded", () => {
  assert.equal(policies()[0]?.forwardNotMatchingPreflights, false);
  assert.equal(policies()[1]?.forwardNotMatchingPreflights, true);
});

test("legacy allowOrigin is a list of exact matches; allowCredentials false is kept", () => {
  const p = policies()[1];
  assert.deepEqual(p?.allowOriginStringMatch[0]?.matchPattern, { case: "exact", value: "https://legacy.example.com" });
  assert.equal(p?.allowCredentials, false);
  assert.equal(p?.maxAge, "");
});
