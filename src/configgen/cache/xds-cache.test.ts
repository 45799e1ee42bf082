import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { MeshPush } from "../../model/index.ts";
import { PushStatus } from "../../model/index.ts";
import { resourceTable, XdsCache } from "./xds-cache.ts";

const TABLE = resourceTable<string, { service: object }>({
  name: "test",
  typeUrl: "test",
  key: { service: "object" },
  resources: () => [],
});

function pushOf(cache: XdsCache, version: string): MeshPush {
  return { version, status: new PushStatus(), snapshot: { xdsCache: cache } } as unknown as MeshPush;
}

/** Collects garbage until `cond` holds (finalization callbacks run in a task after the collection). */
async function collectUntil(cond: () => boolean): Promise<void> {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  for (let i = 0; i < 20 && !cond(); i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(cond(), "the input was not collected");
}

test("an entry whose input object was collected is dropped by the next push after the collection is counted", async () => {
  const cache = new XdsCache();
  const resources = cache.resources(TABLE);
  const kept = { name: "kept" };
  resources.get(pushOf(cache, "1"), { service: kept }, () => "kept");
  (() => {
    // Its only reference goes with this scope.
    resources.get(pushOf(cache, "1"), { service: { name: "gone" } }, () => "gone");
  })();
  assert.equal(resources.stats().entries, 2);
  assert.equal(cache.collectedInputs, 0);
  await collectUntil(() => cache.collectedInputs === 1);
  resources.get(pushOf(cache, "2"), { service: kept }, () => "rebuilt");
  assert.equal(resources.stats().entries, 1, "the entry of the collected input is gone");
  assert.equal(
    resources.get(pushOf(cache, "3"), { service: kept }, () => "rebuilt"),
    "kept",
  );
});
