import assert from "node:assert/strict";
import { test } from "node:test";
import { collect, messages } from "../../../../test/support/validation.ts";
import {
  checkDurationField,
  durationError,
  type GoDuration,
  intPercentError,
  parseGoDuration,
  percentError,
  validatePercentMessage,
} from "./durations.ts";

function parsed(s: string): GoDuration {
  const d = parseGoDuration(s);
  assert.ok(!("error" in d), `${s} should parse`);
  return d;
}

test("Go durations: units, fractions, signs and sums", () => {
  assert.equal(parsed("100ms").ms, 100);
  assert.equal(parsed("1h2m").ms, 3_720_000);
  assert.equal(parsed("1.5s").ms, 1500);
  assert.equal(parsed("-1s").ms, -1000);
  assert.equal(parsed("0").ms, 0);
  assert.equal(parsed("1us").nanos, 1000n);
  assert.equal(parsed("1\u00b5s").nanos, 1000n);
  assert.equal(parsed(".5s").ms, 500);
});

test("Go durations: Go's error texts", () => {
  assert.deepEqual(parseGoDuration(""), { error: 'time: invalid duration ""' });
  assert.deepEqual(parseGoDuration("1"), { error: 'time: missing unit in duration "1"' });
  assert.deepEqual(parseGoDuration("1x"), { error: 'time: unknown unit "x" in duration "1x"' });
  assert.deepEqual(parseGoDuration("s"), { error: 'time: invalid duration "s"' });
  assert.deepEqual(parseGoDuration("3000000h"), { error: 'time: invalid duration "3000000h"' });
});

test("duration rule: at least 1ms, whole milliseconds", () => {
  assert.equal(durationError(parsed("1ms")), undefined);
  assert.equal(durationError(parsed("0s")), "duration must be greater than 1ms");
  assert.equal(durationError(parsed("-5s")), "duration must be greater than 1ms");
  assert.equal(durationError(parsed("1500us")), "only durations to ms precision are supported");
});

test("duration fields: decode errors as bad Duration, then the rule, at the field path", () => {
  const r = collect((out) => {
    checkDurationField({ a: "10x", b: "0.5ms", c: "2s" }, "a", out);
    checkDurationField({ a: "10x", b: "0.5ms", c: "2s" }, "b", out);
    checkDurationField({ a: "10x", b: "0.5ms", c: "2s" }, "c", out);
    checkDurationField({}, "d", out);
  });
  assert.deepEqual(r.errors, [
    { path: "spec.a", message: 'bad Duration: time: unknown unit "x" in duration "10x"' },
    { path: "spec.b", message: "duration must be greater than 1ms" },
  ]);
});

test("percentages: integer 0..100 and Percent 0 or [0.0001, 100]", () => {
  assert.equal(intPercentError(100), undefined);
  assert.equal(intPercentError(101), "percentage 101 is not in range 0..100");
  assert.equal(intPercentError(-1), "percentage -1 is not in range 0..100");
  assert.equal(percentError(0), undefined);
  assert.equal(percentError(0.0001), undefined);
  assert.equal(percentError(0.00001), "percentage 1e-05 is neither 0.0, nor in range [0.0001, 100.0]");
  assert.equal(percentError(100.5), "percentage 100.5 is neither 0.0, nor in range [0.0001, 100.0]");
  assert.deepEqual(messages(collect((out) => validatePercentMessage({ value: -1 }, out)).errors), [
    "percentage -1 is neither 0.0, nor in range [0.0001, 100.0]",
  ]);
});
