import assert from "node:assert/strict";
import { test } from "node:test";
import type { StatusReport } from "../ambient/index.ts";
import type { ConfigObject } from "../config/index.ts";
import { conditionsPatch, currentConditions } from "./ambient-status.ts";

const NOW = new Date("2026-12-07T09:30:22.123Z");
const bound = {
  status: true,
  reason: "WaypointAccepted",
  message: "Successfully attached to waypoint ns/w",
  observedGeneration: 0,
};
/** The conditions a patch sets (none when there is no patch). */
const patched = (patch: Record<string, unknown> | undefined) =>
  (patch?.status as { conditions: unknown[] } | undefined)?.conditions ?? [];
const report = (conditions: StatusReport["conditions"]): StatusReport => ({
  key: "ns/app.ns.svc.cluster.local",
  target: { apiVersion: "v1", kind: "Service", namespace: "ns", name: "app" },
  conditions,
});
const withConditions = (conditions: unknown[]): ConfigObject =>
  ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "app", namespace: "ns" },
    status: { conditions },
  }) as ConfigObject;

test("conditions are read from Kubernetes' and Istio's status alike", () => {
  const current = currentConditions(
    withConditions([
      { type: "A", status: "True", reason: "R", message: "M", observedGeneration: 2, lastTransitionTime: "x" },
      { type: "B", status: "False", observedGeneration: "7" },
    ]),
  );
  assert.deepEqual(current.get("A"), { status: true, reason: "R", message: "M", observedGeneration: 2 });
  assert.deepEqual(current.get("B"), { status: false, reason: "", message: "", observedGeneration: 7 });
  assert.equal(currentConditions(undefined).size, 0);
});

test("an apply of the writer's conditions, as istiod's JSON, only when one differs or one to remove is there", () => {
  const wanted = report({ "istio.io/WaypointBound": bound, "istio.io/WaypointMissing": null });
  const patch = conditionsPatch(wanted, new Map(), NOW);
  assert.deepEqual(patch, {
    kind: "Service",
    apiVersion: "v1",
    metadata: { name: "app", creationTimestamp: null },
    status: {
      conditions: [
        {
          type: "istio.io/WaypointBound",
          status: "True",
          lastTransitionTime: "2026-12-07T09:30:22.123Z",
          reason: "WaypointAccepted",
          message: "Successfully attached to waypoint ns/w",
        },
      ],
    },
  });
  // As it is: nothing to write, whatever the time and other writers' conditions.
  const written = currentConditions(withConditions([...patched(patch), { type: "Other", status: "True" }]));
  assert.equal(conditionsPatch(wanted, written, NOW), undefined);
  // One to remove is there: an apply without it.
  const missing = new Map([
    ...written,
    ["istio.io/WaypointMissing", { ...bound, reason: "NoWaypointForWildcardService" }],
  ]);
  assert.equal(patched(conditionsPatch(wanted, missing, NOW)).length, 1);
  // Nothing to set and nothing there: no write; something there: an empty list (the apply removes ours).
  const none = report({ "istio.io/WaypointBound": null });
  assert.equal(conditionsPatch(none, new Map(), NOW), undefined);
  assert.deepEqual(conditionsPatch(none, written, NOW)?.status, { conditions: [] });
  // A changed message, or an Istio condition's generation (a string, as jsonpb writes int64).
  const policy = report({
    ZtunnelAccepted: { status: false, reason: "UnsupportedValue", message: "m", observedGeneration: 4 },
  });
  const [condition] = patched(conditionsPatch(policy, new Map(), new Date("2026-12-07T09:30:22Z")));
  assert.deepEqual(condition, {
    type: "ZtunnelAccepted",
    status: "False",
    lastTransitionTime: "2026-12-07T09:30:22Z",
    reason: "UnsupportedValue",
    message: "m",
    observedGeneration: "4",
  });
});
