import assert from "node:assert/strict";
import { test } from "node:test";
import { PushStatus } from "./push-status.ts";

test("toJSON is Istio's ProxyStatus: metrics and keys sorted, empty proxy and message left out, a later case replaces", () => {
  const status = new PushStatus();
  status.add("pilot_eds_no_instances", "outbound|80||b");
  status.add("pilot_eds_no_instances", "outbound|80||a");
  const report = status.reporter("app.ns");
  report("pilot_conflict_inbound_listener", "app.ns", "first");
  report("pilot_conflict_inbound_listener", "app.ns", "second");
  assert.equal(
    JSON.stringify(status),
    JSON.stringify({
      pilot_conflict_inbound_listener: { "app.ns": { proxy: "app.ns", message: "second" } },
      pilot_eds_no_instances: { "outbound|80||a": {}, "outbound|80||b": {} },
    }),
  );
  assert.equal(status.count("pilot_eds_no_instances"), 2);
  assert.equal(status.count("pilot_vservice_dup_domain"), 0);
});

test("carryOver keeps an earlier push's cases, except where the new push reported the same key", () => {
  const earlier = new PushStatus();
  earlier.add("pilot_duplicate_envoy_clusters", "c", "p", "old");
  earlier.add("pilot_eds_no_instances", "e");
  const current = new PushStatus();
  current.add("pilot_duplicate_envoy_clusters", "c", "p", "new");
  current.carryOver(earlier);
  assert.deepEqual(current.toJSON(), {
    pilot_duplicate_envoy_clusters: { c: { proxy: "p", message: "new" } },
    pilot_eds_no_instances: { e: {} },
  });
});

test("merge adds another status's cases, replacing those under the same metric and key", () => {
  const built = new PushStatus();
  built.add("pilot_duplicate_envoy_clusters", "c", "p", "rebuilt");
  built.add("pilot_eds_no_instances", "e");
  const current = new PushStatus();
  current.add("pilot_duplicate_envoy_clusters", "c", "p", "first");
  current.add("pilot_vservice_dup_domain", "d", "q");
  current.merge(built);
  assert.deepEqual(current.toJSON(), {
    pilot_duplicate_envoy_clusters: { c: { proxy: "p", message: "rebuilt" } },
    pilot_eds_no_instances: { e: {} },
    pilot_vservice_dup_domain: { d: { proxy: "q" } },
  });
});
