import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { proxyFixture } from "../../../test/support/route-cases.ts";
import { route } from "../../api/index.ts";
import { durationSeconds, toDuration } from "../duration.ts";
import { integerToFractional, percentToFractional } from "./percent.ts";
import { applyTimeout } from "./timeout.ts";

test("Envoy proxies: timeout, and the same value as max_grpc_timeout; unset is 0s (Envoy's 15s default off)", () => {
  const action = create(route.RouteActionSchema);
  applyTimeout(action, undefined, proxyFixture());
  assert.equal(action.timeout?.seconds, 0n);
  assert.equal(action.maxGrpcTimeout?.seconds, 0n);
  assert.equal(action.maxStreamDuration, undefined);
  applyTimeout(action, "2m", proxyFixture());
  assert.equal(action.timeout?.seconds, 120n);
  assert.equal(action.maxGrpcTimeout?.seconds, 120n);
});

test("proxyless gRPC reads only max_stream_duration", () => {
  const action = create(route.RouteActionSchema);
  applyTimeout(action, "250ms", proxyFixture({ generator: "grpc" }));
  assert.equal(action.maxStreamDuration?.maxStreamDuration?.nanos, 250_000_000);
  assert.equal(action.maxGrpcTimeout, undefined);
});

test("durations and percentages as Istio converts them", () => {
  assert.deepEqual([toDuration("1.5s")?.seconds, toDuration("1.5s")?.nanos], [1n, 500_000_000]);
  assert.equal(toDuration("bogus"), undefined);
  assert.equal(durationSeconds("90s"), 90n);
  assert.equal(percentToFractional(0.0001).numerator, 1);
  assert.equal(percentToFractional(33.33339).numerator, 333333);
  assert.equal(integerToFractional(5).numerator, 5);
});
