import assert from "node:assert/strict";
import { test } from "node:test";
import { formatDuration, parseDuration } from "./duration.ts";

test("Gateway API durations become protobuf JSON durations", () => {
  assert.equal(formatDuration(parseDuration("1ms")), "0.001s");
  assert.equal(formatDuration(parseDuration("10s")), "10s");
  assert.equal(formatDuration(parseDuration("1h30m")), "5400s");
  assert.equal(formatDuration(parseDuration("1s500ms")), "1.500s");
});

test("text that is not a duration is zero", () => {
  assert.equal(parseDuration("soon"), 0n);
  assert.equal(parseDuration("10s!"), 0n);
});
