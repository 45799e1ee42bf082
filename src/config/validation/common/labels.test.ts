import assert from "node:assert/strict";
import { test } from "node:test";
import { collect } from "../../../../test/support/validation.ts";
import { labelErrors, labelKeyError, labelValueError, validateLabels } from "./labels.ts";

test("label keys: optional DNS prefix and a qualified name", () => {
  for (const ok of ["app", "app.kubernetes.io/name", "A_b.c-d", "x"]) assert.equal(labelKeyError(ok), undefined, ok);
  assert.equal(labelKeyError(""), 'invalid tag key: ""');
  assert.equal(labelKeyError("-app"), 'invalid tag key: "-app"');
  assert.equal(labelKeyError("a/b/c"), 'invalid tag key: "a/b/c"');
  const longPrefix = `${"a".repeat(60)}.`.repeat(5).slice(0, -1);
  assert.equal(labelKeyError(`${longPrefix}/x`), `invalid tag key: "${longPrefix}/x" (DNS prefix is too long)`);
  assert.equal(labelKeyError("a".repeat(64)), `invalid tag key: "${"a".repeat(64)}" (name is too long)`);
});

test("label values: empty or a qualified name of any length", () => {
  assert.equal(labelValueError(""), undefined);
  assert.equal(labelValueError("a".repeat(100)), undefined);
  assert.equal(labelValueError("bad value"), 'invalid tag value: "bad value"');
});

test("labels: every bad key and value is reported", () => {
  assert.deepEqual(labelErrors({ "-a": "-b", ok: "fine" }), ['invalid tag key: "-a"', 'invalid tag value: "-b"']);
  const r = collect((out) => validateLabels({ "x y": "v" }, out.at("labels")));
  assert.deepEqual(r.errors, [{ path: "spec.labels", message: 'invalid tag key: "x y"' }]);
});
