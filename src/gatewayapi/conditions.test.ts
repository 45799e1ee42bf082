import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Condition, setConditions, stampTransitionTimes, TRANSITION_TIME } from "./conditions.ts";

const accepted: Condition = {
  type: "Accepted",
  status: "True",
  lastTransitionTime: "2024-01-01T00:00:00Z",
  reason: "Accepted",
  message: "Resource accepted",
};

describe("setConditions (Istio's SetListenerConditions)", () => {
  test("adds missing conditions in sorted type order", () => {
    const conditions = setConditions(undefined, [], {
      ResolvedRefs: { reason: "ResolvedRefs", message: "ok" },
      Accepted: { reason: "Accepted", message: "ok" },
    });
    assert.deepEqual(
      conditions.map((c) => c.type),
      ["Accepted", "ResolvedRefs"],
    );
    assert.equal(conditions[0].lastTransitionTime, TRANSITION_TIME);
  });

  test("an unchanged condition keeps its transition time", () => {
    const [kept] = setConditions(undefined, [accepted], {
      Accepted: { reason: "Accepted", message: "Resource accepted" },
    });
    assert.equal(kept.lastTransitionTime, "2024-01-01T00:00:00Z");
  });

  test("a new message with the same status keeps the transition time but takes the new text", () => {
    const [changed] = setConditions(undefined, [accepted], { Accepted: { reason: "Accepted", message: "other" } });
    assert.equal(changed.message, "other");
    assert.equal(changed.lastTransitionTime, "2024-01-01T00:00:00Z");
  });

  test("an error inverts the status and carries its own reason and message", () => {
    const [failed] = setConditions(3, [accepted], {
      Accepted: {
        reason: "Accepted",
        message: "ok",
        error: { reason: "NoMatchingParent", message: "port 1 not found" },
      },
    });
    assert.deepEqual(failed, {
      type: "Accepted",
      status: "False",
      observedGeneration: 3,
      lastTransitionTime: TRANSITION_TIME,
      reason: "NoMatchingParent",
      message: "port 1 not found",
    });
  });

  test("an error on a condition that is False on success makes it True (Conflicted)", () => {
    const [conflicted] = setConditions(undefined, [], {
      Conflicted: {
        reason: "NoConflicts",
        message: "ok",
        status: "False",
        error: { reason: "HostnameConflict", message: "x" },
      },
    });
    assert.equal(conflicted.status, "True");
  });

  test("setOnce only replaces a condition still carrying the default reason", () => {
    const pending = { ...accepted, reason: "Pending" };
    const spec = { Accepted: { reason: "Accepted", message: "new", setOnce: "Pending" } };
    assert.equal(setConditions(undefined, [pending], spec)[0].message, "new");
    assert.equal(setConditions(undefined, [accepted], spec)[0].message, "Resource accepted");
  });
});

test("stampTransitionTimes fills in only unstamped times", () => {
  const stamped = stampTransitionTimes(
    { conditions: [accepted, { ...accepted, type: "Programmed", lastTransitionTime: TRANSITION_TIME }] },
    "2026-01-01T00:00:00Z",
  );
  assert.deepEqual(
    stamped.conditions.map((c) => c.lastTransitionTime),
    ["2024-01-01T00:00:00Z", "2026-01-01T00:00:00Z"],
  );
});
