import assert from "node:assert/strict";
import { test } from "node:test";
import { runGoldenCase, vhostNamed } from "../../../test/support/route-cases.ts";
import { fault, unpackAny } from "../../api/index.ts";

function faults() {
  const routes = vhostNamed(runGoldenCase("fault").get("9080"), "ratings.default.svc.cluster.local:9080").routes;
  return routes.map((r) => {
    const any = r.typedPerFilterConfig["envoy.filters.http.fault"];
    return any ? unpackAny(any, fault.HTTPFaultSchema) : undefined;
  });
}

test("fault golden: fixed delay and HTTP abort, percentages in millionths", () => {
  const f = faults()[0];
  assert.deepEqual(f?.delay?.faultDelaySecifier.case, "fixedDelay");
  assert.equal(f?.delay?.percentage?.numerator, 1000);
  assert.equal(f?.delay?.percentage?.denominator, 2);
  assert.deepEqual(f?.abort?.errorType, { case: "httpStatus", value: 500 });
  assert.equal(f?.abort?.percentage?.numerator, 125000);
});

test("legacy integer percent counts in hundredths", () => {
  const f = faults()[1];
  assert.equal(f?.delay?.percentage?.numerator, 40);
  assert.equal(f?.delay?.percentage?.denominator, 0);
});

test("gRPC abort by status name; no percentage means none set", () => {
  const f = faults()[2];
  assert.deepEqual(f?.abort?.errorType, { case: "grpcStatus", value: 14 });
  assert.equal(f?.abort?.percentage, undefined);
});

test("an exponential delay alone gives no fault config", () => {
  assert.equal(faults()[3], undefined);
});
