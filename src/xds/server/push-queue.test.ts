import assert from "node:assert/strict";
import { test } from "node:test";
import { newPushContext, type PushRequest, pushRequest } from "../../model/push-context.ts";
import { PushQueue } from "./push-queue.ts";

const key = (name: string) => ({ kind: "networking.istio.io/VirtualService", namespace: "default", name });

/** A processor whose pushes finish only when the test says so. */
function controlled() {
  const started: { proxy: string; req: PushRequest; finish: () => void }[] = [];
  const process = (proxy: string, req: PushRequest) =>
    new Promise<void>((resolve) => started.push({ proxy, req, finish: resolve }));
  return { started, process };
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setImmediate(r));
  assert.ok(cond(), "condition not reached");
}

test("at most `concurrency` proxies are pushed at once, in FIFO order", async () => {
  const { started, process } = controlled();
  const q = new PushQueue<string>(2, process);
  const push = newPushContext({});
  for (const p of ["a", "b", "c"]) q.enqueue(p, pushRequest({ full: true, push }));
  await until(() => started.length === 2);
  assert.deepEqual(
    started.map((s) => s.proxy),
    ["a", "b"],
  );
  assert.equal(q.pending, 1);
  started[0].finish();
  await until(() => started.length === 3);
  assert.equal(started[2].proxy, "c");
  started[1].finish();
  started[2].finish();
  await q.idle();
});

test("pushes start a few per turn of the event loop, so the first go out before the rest are built", async () => {
  const { started, process } = controlled();
  const q = new PushQueue<string>(100, process);
  const push = newPushContext({});
  for (let i = 0; i < 10; i++) q.enqueue(`p${i}`, pushRequest({ full: false, push }));
  await new Promise((r) => setImmediate(r));
  assert.equal(started.length, 4, "the first turn starts four");
  await new Promise((r) => setImmediate(r));
  assert.equal(started.length, 8, "the next turn four more");
  await until(() => started.length === 10);
  for (const s of started) s.finish();
  await q.idle();
});

test("a newer request for a queued proxy merges into the pending one", async () => {
  const { started, process } = controlled();
  const q = new PushQueue<string>(1, process);
  const p1 = newPushContext({});
  const p2 = newPushContext({});
  q.enqueue("busy", pushRequest({ full: true, push: p1 }));
  await until(() => started.length === 1);
  q.enqueue("x", pushRequest({ full: false, push: p1, configsUpdated: [key("a")] }));
  q.enqueue("x", pushRequest({ full: false, push: p2, configsUpdated: [key("b")] }));
  assert.equal(q.pending, 1);
  started[0].finish();
  await until(() => started.length === 2);
  const merged = started[1].req;
  assert.equal(merged.push, p2);
  assert.deepEqual([...merged.configsUpdated.values()].map((k) => k.name).sort(), ["a", "b"]);
  started[1].finish();
  await q.idle();
  assert.equal(started.length, 2, "x is pushed once");
});

test("a request arriving while its proxy is being pushed runs after that push", async () => {
  const { started, process } = controlled();
  const q = new PushQueue<string>(4, process);
  const push = newPushContext({});
  q.enqueue("x", pushRequest({ full: false, push }));
  await until(() => started.length === 1);
  q.enqueue("x", pushRequest({ full: true, push }));
  await new Promise((r) => setImmediate(r));
  assert.equal(started.length, 1, "never two pushes of one proxy at once");
  started[0].finish();
  await until(() => started.length === 2);
  assert.equal(started[1].req.full, true);
  started[1].finish();
  await q.idle();
});

test("a removed proxy is not pushed", async () => {
  const { started, process } = controlled();
  const q = new PushQueue<string>(1, process);
  const push = newPushContext({});
  q.enqueue("busy", pushRequest({ full: true, push }));
  q.enqueue("gone", pushRequest({ full: true, push }));
  q.remove("gone");
  await until(() => started.length === 1);
  started[0].finish();
  await q.idle();
  assert.deepEqual(
    started.map((s) => s.proxy),
    ["busy"],
  );
});

test("FIFO holds across pops, removals, requests during a push, and a queue emptied and filled again", async () => {
  const { started, process } = controlled();
  const q = new PushQueue<string>(1, process);
  const push = newPushContext({});
  const req = () => pushRequest({ full: true, push });
  for (const p of ["a", "b", "c", "d"]) q.enqueue(p, req());
  await until(() => started.length === 1);
  q.enqueue("a", req()); // while a is pushed: after the others
  q.remove("c");
  q.enqueue("e", req());
  assert.ok(q.holds("a") && q.holds("b") && !q.holds("c"));
  for (let i = 0; i < 4; i++) {
    started[i].finish();
    await until(() => started.length === i + 2);
  }
  started[4].finish();
  await q.idle();
  assert.deepEqual(
    started.map((s) => s.proxy),
    ["a", "b", "d", "e", "a"],
  );
  q.enqueue("f", req());
  await until(() => started.length === 6);
  assert.equal(started[5].proxy, "f");
  started[5].finish();
  await q.idle();
  assert.equal(q.holds("f"), false);
});
