import assert from "node:assert/strict";
import { test } from "node:test";
import { getHeapSpaceStatistics } from "node:v8";
import { IdleCollector } from "./idle-gc.ts";

/**
 * An IdleCollector that records what it does instead of collecting; the memory it is shown (`held`)
 * grows by 100 bytes a quiet period, and a collection brings it back to 0.
 */
function setup(busy = () => false, minGrowthBytes = 0) {
  const events: string[] = [];
  const memory = { held: 0 };
  const collector = new IdleCollector({
    quietMs: 1000,
    minIntervalMs: 10_000,
    busy,
    minGrowthBytes,
    heldBytes: () => memory.held,
    onQuiet: () => {
      events.push("quiet");
      memory.held += 100;
    },
    collect: (done) => {
      events.push("collect");
      memory.held = 0;
      done();
    },
  });
  return { events, collector, memory };
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
  assert.deepEqual(events, ["quiet", "collect"]);
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
  assert.deepEqual(events, ["quiet", "collect"]);
});

test("collections are minIntervalMs apart: a quiet period sooner waits for the rest", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 50_000 });
  const { events, collector } = setup();
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.deepEqual(events, ["quiet", "collect"]);
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.equal(events.length, 2, "only 1 s after the last collection");
  t.mock.timers.tick(8999);
  assert.equal(events.length, 2);
  t.mock.timers.tick(1);
  assert.deepEqual(events, ["quiet", "collect", "quiet", "collect"]);
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
  assert.deepEqual(events, ["quiet", "collect"]);
});

test("stop cancels a pending collection", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const { events, collector } = setup();
  collector.quiet();
  collector.stop();
  t.mock.timers.tick(1000);
  assert.deepEqual(events, []);
});

test("collects only once the memory held grew by minGrowthBytes since the last collection", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"], now: 50_000 });
  const { events, collector, memory } = setup(() => false, 250);
  for (let period = 0; period < 2; period++) {
    collector.quiet();
    t.mock.timers.tick(1000);
  }
  assert.deepEqual(events, ["quiet", "quiet"], "200 bytes grown: not worth a collection");
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.deepEqual(events.slice(2), ["quiet", "collect"], "300 bytes grown");
  assert.equal(memory.held, 0);
  t.mock.timers.tick(10_000);
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.equal(events.at(-1), "quiet", "100 bytes grown since the collection");
});

test("after start-up the first quiet period collects whatever the growth; writing first defers it", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  let writing = true;
  const { events, collector } = setup(() => writing, 250);
  collector.startupDone();
  t.mock.timers.tick(1000);
  assert.deepEqual(events, [], "writing: no collection yet");
  writing = false;
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.deepEqual(events, ["quiet", "collect"], "100 bytes grown, collected all the same");
  t.mock.timers.tick(10_000);
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.deepEqual(events, ["quiet", "collect", "quiet"], "then growth decides again");
});

test("memory that shrank below the last collection's mark (V8 collected on its own) is the new mark", (t) => {
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const { events, collector, memory } = setup(() => false, 250);
  memory.held = -500; // the collector was made at 0
  collector.quiet();
  t.mock.timers.tick(1000);
  assert.deepEqual(events, ["quiet"], "-400 after onQuiet: the mark now");
  memory.held = -200;
  collector.quiet();
  t.mock.timers.tick(1000);
  // -100 after onQuiet: 300 above the new mark (and still below the first).
  assert.deepEqual(events, ["quiet", "quiet", "collect"]);
});

const newSpaceBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? 0;

test("the default collection frees the garbage and gives back the young generation it grew", async (t) => {
  const unreferenced = new WeakRef({ bytes: new Uint8Array(1024) });
  // Objects that survive a scavenge or two make V8 grow the young generation past its 1 MiB start.
  let survivors: object[] = [];
  for (let i = 0; i < 600_000; i++) {
    survivors.push({ i });
    if (survivors.length > 100_000) survivors = [];
  }
  const grown = newSpaceBytes();
  assert.ok(grown > 4 * 1024 * 1024, `the young generation grew (${grown} bytes)`);
  // A WeakRef keeps its target until the job that made it ends.
  await new Promise((resolve) => setImmediate(resolve));
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const collector = new IdleCollector({ quietMs: 1, minIntervalMs: 0, minGrowthBytes: 0, busy: () => false });
  collector.quiet();
  t.mock.timers.tick(1);
  // The collection runs in a task of its own.
  for (let turns = 0; turns < 100 && unreferenced.deref() !== undefined; turns++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.equal(unreferenced.deref(), undefined);
  assert.ok(newSpaceBytes() < grown, `the young generation shrank from ${grown} to ${newSpaceBytes()} bytes`);
  assert.ok(survivors.length > 0);
});
