import assert from "node:assert/strict";
import { test } from "node:test";
import { FakeClock, settle } from "../../../test/support/fake-clock.ts";
import { newPushContext, type PushRequest, pushRequest } from "../../model/push-context.ts";
import { type DebouncedPush, Debouncer } from "./debounce.ts";

const push = newPushContext({});
const config = (name: string, full = true): PushRequest =>
  pushRequest({
    full,
    push,
    configsUpdated: [{ kind: "networking.istio.io/VirtualService", namespace: "ns", name }],
    reasons: [full ? "config" : "endpoint"],
  });

function setup(options = { afterMs: 100, maxMs: 1000, edsDebounce: true }) {
  const clock = new FakeClock();
  const pushed: DebouncedPush[] = [];
  const debouncer = new Debouncer(options, (p) => void pushed.push(p), clock);
  return { clock, pushed, debouncer };
}

test("changes within the quiet period are merged into one push, sent once it has been quiet", async () => {
  const { clock, pushed, debouncer } = setup();
  debouncer.add(config("a"));
  await clock.advance(60);
  debouncer.add(config("b"));
  await clock.advance(60);
  assert.equal(pushed.length, 0, "b arrived 60 ms ago: not quiet yet");
  await clock.advance(40);
  assert.equal(pushed.length, 1);
  assert.equal(pushed[0].events, 2);
  assert.deepEqual([...pushed[0].req.configsUpdated.values()].map((k) => k.name).sort(), ["a", "b"]);
  assert.equal(pushed[0].startedAt, 0);
});

test("a steady stream of changes is pushed when the first has waited the maximum", async () => {
  const { clock, pushed, debouncer } = setup();
  for (let t = 0; t < 1000; t += 50) {
    debouncer.add(config(`c${t}`));
    await clock.advance(50);
  }
  assert.equal(pushed.length, 1);
  assert.equal(pushed[0].events, 20);
});

test("a full change and an endpoint change merge into a full push", async () => {
  const { clock, pushed, debouncer } = setup();
  debouncer.add(config("ep", false));
  debouncer.add(config("vs", true));
  await clock.advance(100);
  assert.equal(pushed.length, 1);
  assert.equal(pushed[0].req.full, true);
  assert.equal(pushed[0].req.reasons.get("endpoint"), 1);
  assert.equal(pushed[0].req.reasons.get("config"), 1);
});

test("with EDS debounce off, endpoint changes go out at once and config changes still wait", async () => {
  const { clock, pushed, debouncer } = setup({ afterMs: 100, maxMs: 1000, edsDebounce: false });
  debouncer.add(config("ep", false));
  debouncer.add(config("vs", true));
  await settle();
  assert.equal(pushed.length, 1);
  assert.equal(pushed[0].req.full, false);
  await clock.advance(100);
  assert.equal(pushed.length, 2);
  assert.equal(pushed[1].req.full, true);
});

test("changes during a slow push wait for it, then go out as one", async () => {
  const clock = new FakeClock();
  const pushed: DebouncedPush[] = [];
  let release: () => void = () => {};
  const debouncer = new Debouncer(
    { afterMs: 100, maxMs: 1000, edsDebounce: true },
    (p) => {
      pushed.push(p);
      return new Promise<void>((r) => {
        release = r;
      });
    },
    clock,
  );
  debouncer.add(config("a"));
  await clock.advance(100);
  debouncer.add(config("b"));
  debouncer.add(config("c"));
  await clock.advance(500);
  assert.equal(pushed.length, 1, "the first push is still running");
  release();
  await settle();
  assert.equal(pushed.length, 2);
  assert.equal(pushed[1].events, 2);
});

test("stop drops pending changes", async () => {
  const { clock, pushed, debouncer } = setup();
  debouncer.add(config("a"));
  debouncer.stop();
  debouncer.add(config("b"));
  await clock.advance(2000);
  assert.equal(pushed.length, 0);
});
