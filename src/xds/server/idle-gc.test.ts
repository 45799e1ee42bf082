import assert from "node:assert/strict";
import { test } from "node:test";
import { COLLECTIONS_PER_QUIET, IdleCollector } from "./idle-gc.ts";

/** What one quiet period does. */
const ROUNDS = Array<string>(COLLECTIONS_PER_QUIET).fill("collect");

/** An IdleCollector that records what it does instead of collecting. */
function setup(busy = () => false) {
  const events: string[] = [];
  const collector = new IdleCollector({
    quietMs: 1000,
    minIntervalMs: 10_000,
    busy,
    onQuiet: () => events.push("quiet"),
    collect: () => events.push("collect"),
  });
  return { events, collector };
}

test("collects once writing has been quiet for quietMs, after onQuiet", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const { events, collector } = setup();
  collector.quiet();
  t.mock.timers.tick(999);
  collector.quiet(); // writing stopped again: the quiet period starts over
  t.mock.timers.tick(999);
  assert.deepEqual(events, []);
  t.mock.timers.tick(1);
  assert.deepEqual(events, ["quiet", ...ROUNDS]);
});

test("does not collect while writing has resumed; the next quiet period decides", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  let busy = true;
  const { events, collector } = setup(() => busy);
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.deepEqual(events, []);
  busy = false;
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.deepEqual(events, ["quiet", ...ROUNDS]);
});

test("collections are minIntervalMs apart: a quiet period sooner waits for the rest", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 50_000 });
  const { events, collector } = setup();
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.deepEqual(events, ["quiet", ...ROUNDS]);
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.equal(events.length, 1 + COLLECTIONS_PER_QUIET, "only 1 s after the last collection");
  t.mock.timers.tick(8999);
  assert.equal(events.length, 1 + COLLECTIONS_PER_QUIET);
  t.mock.timers.tick(1);
  assert.deepEqual(events, ["quiet", ...ROUNDS, "quiet", ...ROUNDS]);
});

test("writing that resumes between the collections of a quiet period stops the rest", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  let collections = 0;
  const collector = new IdleCollector({
    quietMs: 1000,
    minIntervalMs: 10_000,
    busy: () => collections > 0, // a push started writing right after the first collection
    collect: () => collections++,
  });
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.equal(collections, 1);
});

test("postpone restarts a pending quiet period, and arms none", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const { events, collector } = setup();
  collector.postpone();
  t.mock.timers.tick(5000);
  assert.deepEqual(events, [], "nothing was pending");
  collector.quiet();
  t.mock.timers.tick(900);
  collector.postpone(); // a config change arrived: its push comes first
  t.mock.timers.tick(999);
  assert.deepEqual(events, []);
  t.mock.timers.tick(1);
  assert.deepEqual(events, ["quiet", ...ROUNDS]);
});

test("stop cancels a pending collection", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const { events, collector } = setup();
  collector.quiet();
  collector.stop();
  t.mock.timers.tick(1000);
  assert.deepEqual(events, []);
});

test("the default collection is V8's full collection", async (t) => {
  const unreferenced = new WeakRef({ bytes: new Uint8Array(1024) });
  // A WeakRef keeps its target until the job that made it ends.
  await new Promise((resolve) => setImmediate(resolve));
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const collector = new IdleCollector({ quietMs: 1, minIntervalMs: 0, busy: () => false });
  collector.quiet();
  t.mock.timers.tick(1);
  assert.equal(unreferenced.deref(), undefined);
});
