import assert from "node:assert/strict";
import { test } from "node:test";
import { ResponseSlots } from "./response-slots.ts";

test("at most `limit` slots are held; waiters get them in the order they asked", async () => {
  const slots = new ResponseSlots(2, 60_000);
  const a = await slots.acquire();
  const b = await slots.acquire();
  const granted: string[] = [];
  const c = slots.acquire().then((release) => {
    granted.push("c");
    return release;
  });
  const d = slots.acquire().then((release) => {
    granted.push("d");
    return release;
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(granted, []);
  assert.equal(slots.inUse, 2);
  assert.equal(slots.waiting, 2);
  b();
  b(); // a second release of the same slot gives nothing back
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(granted, ["c"]);
  a();
  (await c)();
  (await d)();
  assert.deepEqual(granted, ["c", "d"]);
  assert.equal(slots.inUse, 0);
  assert.equal(slots.waiting, 0);
});

test("a slot held past holdMs passes on by itself", async () => {
  const slots = new ResponseSlots(1, 20);
  // The hold timer does not keep a process alive by itself; this test must.
  const keepAlive = setTimeout(() => {}, 5_000);
  await slots.acquire(); // never released: a proxy that stopped reading
  const next = await slots.acquire();
  clearTimeout(keepAlive);
  assert.equal(slots.inUse, 1);
  next();
  await new Promise((resolve) => setTimeout(resolve, 40));
  assert.equal(slots.inUse, 0);
});

test("a limit below one is refused", () => {
  assert.throws(() => new ResponseSlots(0, 1000), /limit must be at least 1, got 0/);
});

test("onIdle is called when the last slot in use is given back and nobody waits", async () => {
  let idle = 0;
  const slots = new ResponseSlots(1, 60_000, () => idle++);
  const a = await slots.acquire();
  const waiting = slots.acquire();
  a(); // passes straight to the waiter: still busy
  assert.equal(idle, 0);
  const b = await waiting;
  b();
  assert.equal(idle, 1);
  b(); // a second release gives nothing back
  assert.equal(idle, 1);
});
