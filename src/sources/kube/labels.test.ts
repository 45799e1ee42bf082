import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseLabelSelector, selectorMatches } from "./labels.ts";

describe("label selectors", () => {
  const labels = { app: "web", tier: "front" };

  test("matchLabels and matchExpressions are ANDed; an empty selector matches everything", () => {
    assert.ok(selectorMatches({}, labels));
    assert.ok(selectorMatches({ matchLabels: { app: "web" } }, labels));
    assert.ok(!selectorMatches({ matchLabels: { app: "web", tier: "back" } }, labels));
    assert.ok(
      selectorMatches(
        { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "In", values: ["front", "x"] }] },
        labels,
      ),
    );
    assert.ok(
      !selectorMatches(
        { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "NotIn", values: ["front"] }] },
        labels,
      ),
    );
  });

  test("NotIn and DoesNotExist match an absent key; In and Exists do not; unknown operators match nothing", () => {
    assert.ok(selectorMatches({ matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }] }, labels));
    assert.ok(selectorMatches({ matchExpressions: [{ key: "env", operator: "DoesNotExist" }] }, labels));
    assert.ok(!selectorMatches({ matchExpressions: [{ key: "env", operator: "In", values: ["prod"] }] }, labels));
    assert.ok(!selectorMatches({ matchExpressions: [{ key: "env", operator: "Exists" }] }, labels));
    assert.ok(!selectorMatches({ matchExpressions: [{ key: "app", operator: "Matches" }] }, labels));
  });

  test("the string form parses equality, set and existence requirements", () => {
    const matches = (text: string) => selectorMatches(parseLabelSelector(text), labels);
    assert.ok(matches(""));
    assert.ok(matches("app=web,tier==front"));
    assert.ok(!matches("app!=web"));
    assert.ok(matches("app in (api, web),env notin (prod)"));
    assert.ok(!matches("tier notin (front,back)"));
    assert.ok(matches("app,!env"));
    assert.ok(!matches("!app"));
    assert.throws(() => parseLabelSelector("app in web"));
  });
});
