import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { trimMallocHeap } from "./malloc-trim.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Frees every other one of 2,000 16 KiB buffers (glibc's heap, not its top) and collects them. */
function freeAmongKept(): Uint8Array[] {
  const all = Array.from({ length: 2000 }, () => new Uint8Array(16 * 1024).fill(1));
  const kept = all.filter((_, i) => i % 2 === 0);
  all.length = 0;
  gc();
  return kept;
}

test("the free pages among kept allocations are given back", () => {
  const kept = freeAmongKept();
  assert.equal(trimMallocHeap(), true);
  assert.equal(kept.length, 1000);
});
