import assert from "node:assert/strict";
import { test } from "node:test";
import { Backoff } from "./backoff.ts";

test("backoff doubles within jitter bounds, stops at the cap, and starts over after reset", () => {
  const backoff = new Backoff({ initialMs: 100, maxMs: 1000 });
  for (const ceiling of [100, 200, 400, 800, 1000, 1000, 1000]) {
    const delay = backoff.next();
    assert.ok(delay >= ceiling / 2 && delay <= ceiling, `${delay} within [${ceiling / 2}, ${ceiling}]`);
  }
  backoff.reset();
  assert.ok(backoff.next() <= 100);
});
