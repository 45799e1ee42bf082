import assert from "node:assert/strict";
import { test } from "node:test";
import { collect, messages } from "../../../../test/support/validation.ts";
import { validateExportTo } from "./exportto.ts";

function errors(list: string[], opts = {}): string[] {
  return messages(collect((out) => validateExportTo("ns", list, opts, out)).errors);
}

test("exportTo: duplicates, including . against the own namespace", () => {
  assert.deepEqual(errors(["a", "a"]), ["duplicate entries in exportTo for entry a"]);
  assert.deepEqual(errors(["ns", "."]), ["duplicate entries in exportTo: . and current namespace ns"]);
});

test("exportTo: entries must be ., * or a DNS label; ~ only for ServiceEntry", () => {
  assert.deepEqual(errors(["a_b"]), ["only .,*, or a valid DNS 1123 label is allowed as exportTo entry"]);
  assert.deepEqual(errors(["~"]), ["exportTo ~ (none) is not allowed for Istio configuration objects"]);
  assert.deepEqual(errors(["~"], { serviceEntry: true }), []);
  assert.deepEqual(errors(["~", "a"], { serviceEntry: true }), [
    "cannot export service entry to no one (~) and someone",
  ]);
  assert.deepEqual(errors([".", "other"]), []);
});

test("exportTo: * cannot be combined with other entries", () => {
  assert.deepEqual(errors(["*", "a"]), ["cannot have both public (*) and non-public exportTo values for a resource"]);
});

test("exportTo: a DestinationRule with a workload selector stays in its namespace", () => {
  const opts = { destinationRuleWithSelector: true };
  assert.deepEqual(errors(["."], opts), []);
  assert.deepEqual(errors([".", "b"], opts), [
    "destination rule with workload selector cannot have multiple entries in exportTo",
  ]);
  assert.deepEqual(errors(["b"], opts), [
    "destination rule with workload selector cannot have exportTo beyond current namespace",
  ]);
});
