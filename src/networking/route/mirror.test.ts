import assert from "node:assert/strict";
import { test } from "node:test";
import { routeAction, runGoldenCase, vhostNamed } from "../../../test/support/route-cases.ts";

function mirrors() {
  const routes = vhostNamed(runGoldenCase("mirror").get("80"), "web.default.svc.cluster.local:80").routes;
  return routes.map((r) => routeAction(r).requestMirrorPolicies);
}

test("mirror golden: mirrorPercentage in millionths, then mirrors[] (100% by default, 0% dropped); a mirror host not on the port gets the listener port", () => {
  const m = mirrors()[0];
  assert.deepEqual(
    m.map((p) => [p.cluster, p.runtimeFraction?.defaultValue?.numerator]),
    [
      ["outbound|80|v2|shadow.default.svc.cluster.local", 125000],
      ["outbound|80|canary|web.default.svc.cluster.local", 100],
    ],
  );
  assert.equal(m[0].traceSampled, false);
  assert.equal(m[0].disableShadowHostSuffixAppend, true);
});

test("legacy mirrorPercent counts in hundredths; 0% mirrors nothing; no percentage mirrors all", () => {
  const [, legacy, zero, all] = mirrors();
  assert.equal(legacy[0].runtimeFraction?.defaultValue?.numerator, 30);
  assert.equal(legacy[0].runtimeFraction?.defaultValue?.denominator, 0);
  assert.equal(zero.length, 0);
  assert.equal(all[0].runtimeFraction?.defaultValue?.numerator, 100);
});
