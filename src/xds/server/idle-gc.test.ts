import assert from "node:assert/strict";
import { test } from "node:test";
import { IdleCollector } from "./idle-gc.ts";

/** An IdleCollector over a fake external-memory figure and a counted collection. */
function setup(busy = () => false) {
  const state = { external: 100, collections: 0 };
  const collector = new IdleCollector({
    quietMs: 1000,
    growthBytes: 50,
    busy,
    external: () => state.external,
    collect: () => {
      state.collections++;
      state.external = 100;
    },
  });
  return { state, collector };
}

test("collects once writing has been quiet for quietMs and external memory grew by growthBytes", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const { state, collector } = setup();
  state.external = 400;
  collector.quiet();
  t.mock.timers.tick(999);
  assert.equal(state.collections, 0);
  collector.quiet(); // writing stopped again: the quiet period starts over
  t.mock.timers.tick(999);
  assert.equal(state.collections, 0);
  t.mock.timers.tick(1);
  assert.equal(state.collections, 1);
});

test("does not collect for a small growth, nor while writing has resumed", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let busy = false;
  const { state, collector } = setup(() => busy);
  state.external = 149;
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.equal(state.collections, 0, "49 bytes are below growthBytes");
  state.external = 400;
  busy = true;
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.equal(state.collections, 0, "a write is in progress");
  busy = false;
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.equal(state.collections, 1);
});

test("growth counts from the lowest figure seen, and stop cancels a pending check", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const { state, collector } = setup();
  state.external = 20; // V8 freed memory on its own
  collector.quiet();
  t.mock.timers.tick(1000);
  state.external = 80;
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.equal(state.collections, 1, "60 bytes above the low of 20");
  state.external = 400;
  collector.quiet();
  collector.stop();
  t.mock.timers.tick(1000);
  assert.equal(state.collections, 1);
});

test("the default collection is V8's full collection", async (t) => {
  const unreferenced = new WeakRef({ bytes: new Uint8Array(1024) });
  // A WeakRef keeps its target until the job that made it ends.
  await new Promise((resolve) => setImmediate(resolve));
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const collector = new IdleCollector({ quietMs: 1, growthBytes: 0, busy: () => false });
  collector.quiet();
  t.mock.timers.tick(1);
  assert.equal(unreferenced.deref(), undefined);
});

test("onQuiet runs at the end of each quiet period while writing has stopped, before deciding", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let busy = true;
  const order: string[] = [];
  const collector = new IdleCollector({
    quietMs: 1000,
    growthBytes: 0,
    busy: () => busy,
    onQuiet: () => order.push("quiet"),
    external: () => 0,
    collect: () => order.push("collect"),
  });
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.deepEqual(order, []);
  busy = false;
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.deepEqual(order, ["quiet", "collect"]);
});
