import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_MESH_CONFIG } from "../config/index.ts";
import { buildPushContext, mergePushRequests, newPushContext, pushRequest, pushSnapshot } from "./push-context.ts";
import { cfg, proxy, svc } from "./test-fixtures.ts";

const vs = (name: string) => ({ kind: "networking.istio.io/VirtualService", namespace: "default", name });

test("push versions are RFC 3339 time / counter and grow", () => {
  const a = newPushContext({}, new Date("2026-01-02T03:04:05.678Z"));
  const b = newPushContext({});
  assert.match(a.version, /^2026-01-02T03:04:05Z\/\d+$/);
  assert.notEqual(a.version, b.version);
  assert.ok(Object.isFrozen(a));
});

test("configsUpdated dedupes keys by value", () => {
  const req = pushRequest({ full: true, push: newPushContext({}), configsUpdated: [vs("a"), vs("a"), vs("b")] });
  assert.equal(req.configsUpdated.size, 2);
});

test("merging: full wins, newer push wins, earliest start stays, reasons add up", () => {
  const p1 = newPushContext({});
  const p2 = newPushContext({});
  const older = pushRequest({
    full: false,
    push: p1,
    configsUpdated: [vs("a")],
    reasons: ["endpoint"],
    start: new Date(1000),
  });
  const newer = pushRequest({
    full: true,
    push: p2,
    configsUpdated: [vs("b")],
    reasons: ["endpoint", "config"],
    start: new Date(2000),
  });
  const merged = mergePushRequests(older, newer);
  assert.equal(merged.full, true);
  assert.equal(merged.push, p2);
  assert.equal(merged.start.getTime(), 1000);
  assert.deepEqual([...merged.configsUpdated.values()].map((k) => k.name).sort(), ["a", "b"]);
  assert.deepEqual(Object.fromEntries(merged.reasons), { endpoint: 2, config: 1 });
});

test("merging with a full push of everything keeps everything", () => {
  const p = newPushContext({});
  const all = pushRequest({ full: true, push: p });
  const some = pushRequest({ full: false, push: p, configsUpdated: [vs("a")] });
  assert.equal(mergePushRequests(some, all).configsUpdated.size, 0);
  assert.equal(mergePushRequests(all, some).configsUpdated.size, 0);
});

test("buildPushContext reuses the indexes whose inputs are the same objects, Sidecar scopes included", () => {
  const services = [svc("reviews", "bookinfo")];
  const dr = cfg("DestinationRule", "bookinfo", "reviews", { host: "reviews" });
  const vs = cfg("VirtualService", "bookinfo", "reviews", { hosts: ["reviews"] });
  const first = buildPushContext({ configs: [dr, vs], services, mesh: DEFAULT_MESH_CONFIG });
  const scope = pushSnapshot(first).sidecarScope(proxy("sidecar", "bookinfo"));

  const same = pushSnapshot(
    buildPushContext({ configs: [dr, vs], services: [...services], mesh: DEFAULT_MESH_CONFIG }, first),
  );
  assert.equal(same.sidecarScope(proxy("sidecar", "bookinfo")), scope);

  const changedVs = cfg("VirtualService", "bookinfo", "reviews", { hosts: ["reviews"], exportTo: ["."] });
  const next = pushSnapshot(buildPushContext({ configs: [dr, changedVs], services, mesh: DEFAULT_MESH_CONFIG }, first));
  assert.equal(next.destinationRules, pushSnapshot(first).destinationRules);
  assert.notEqual(next.virtualServices, pushSnapshot(first).virtualServices);
  assert.notEqual(next.sidecarScope(proxy("sidecar", "bookinfo")), scope);
});

test("pushSnapshot refuses a push context that was not built from mesh inputs", () => {
  assert.throws(() => pushSnapshot(newPushContext({})), /has no mesh snapshot/);
});
