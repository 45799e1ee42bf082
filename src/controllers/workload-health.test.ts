import assert from "node:assert/strict";
import { test } from "node:test";
import { healthCondition, storedHealth, withCondition, withoutCondition } from "./workload-health.ts";

test("a report is istiod's Healthy condition: True, or False with the probe's message; no reason", () => {
  const at = new Date("2026-03-04T05:06:07.089Z");
  assert.deepEqual(healthCondition({ healthy: true }, at), {
    type: "Healthy",
    status: "True",
    lastProbeTime: "2026-03-04T05:06:07.089Z",
    lastTransitionTime: "2026-03-04T05:06:07.089Z",
  });
  assert.deepEqual(healthCondition({ healthy: false, message: "connection refused" }, at), {
    type: "Healthy",
    status: "False",
    lastProbeTime: "2026-03-04T05:06:07.089Z",
    lastTransitionTime: "2026-03-04T05:06:07.089Z",
    message: "connection refused",
  });
  // protojson leaves out an empty message, and a zero fraction of a second.
  assert.deepEqual(healthCondition({ healthy: false, message: "" }, new Date("2026-03-04T05:06:07Z")), {
    type: "Healthy",
    status: "False",
    lastProbeTime: "2026-03-04T05:06:07Z",
    lastTransitionTime: "2026-03-04T05:06:07Z",
  });
});

test("the condition replaces the status's Healthy condition in place, else is appended; the rest is kept", () => {
  const healthy = healthCondition({ healthy: true }, new Date(0));
  const other = { type: "Reconciled", status: "True" };
  assert.deepEqual(withCondition(undefined, healthy), { conditions: [healthy] });
  assert.deepEqual(withCondition({ observedGeneration: "2", conditions: [other] }, healthy), {
    observedGeneration: "2",
    conditions: [other, healthy],
  });
  const stale = { type: "Healthy", status: "False", message: "down" };
  const status = { conditions: [stale, other] };
  assert.deepEqual(withCondition(status, healthy), { conditions: [healthy, other] });
  assert.deepEqual(status, { conditions: [stale, other] }, "the status read is left as it was");
  assert.equal(storedHealth(status), stale);
  assert.equal(storedHealth({ conditions: [other] }), undefined);
  assert.equal(storedHealth(undefined), undefined);
});

test("removing the Healthy condition keeps the other conditions and fields; no conditions left, no field", () => {
  const healthy = healthCondition({ healthy: true }, new Date(0));
  const other = { type: "Reconciled", status: "True" };
  assert.deepEqual(withoutCondition({ observedGeneration: "2", conditions: [other, healthy] }, "Healthy"), {
    observedGeneration: "2",
    conditions: [other],
  });
  assert.deepEqual(withoutCondition({ observedGeneration: "2", conditions: [healthy] }, "Healthy"), {
    observedGeneration: "2",
  });
  assert.deepEqual(withoutCondition(undefined, "Healthy"), {});
});
