import assert from "node:assert/strict";
import { test } from "node:test";
import { corpusDocuments, runOnDocument, runSemantic } from "../../../test/support/validation.ts";
import { validateProxyConfig } from "./proxyconfig.ts";

const check = (spec: unknown) => runSemantic(validateProxyConfig, spec, { kind: "ProxyConfig" });

test("ProxyConfig: concurrency must not be negative", () => {
  assert.deepEqual(check({ concurrency: -1 }).errors, [
    { path: "spec.concurrency", message: "concurrency must be greater than or equal to 0" },
  ]);
  assert.deepEqual(check({ concurrency: 0 }).errors, []);
});

test("ProxyConfig: selector labels are checked; an empty selector warns", () => {
  assert.deepEqual(check({ selector: { matchLabels: { "": "bar" } } }).errors, [
    { path: "spec.selector.matchLabels", message: 'empty key is not supported in selector: "=bar"' },
  ]);
  assert.deepEqual(check({ selector: { matchLabels: {} } }).warnings, [
    { path: "spec.selector", message: "workload selector specified without labels" },
  ]);
});

test("ProxyConfig: Istio's corpus — valid passes, both invalid documents are rejected", () => {
  for (const doc of corpusDocuments("proxyconfig-valid.yaml")) {
    assert.deepEqual(runOnDocument(validateProxyConfig, doc).errors, [], doc.metadata.name);
  }
  const invalid = corpusDocuments("proxyconfig-invalid.yaml");
  assert.equal(invalid.length, 2);
  for (const doc of invalid) assert.notDeepEqual(runOnDocument(validateProxyConfig, doc).errors, [], doc.metadata.name);
});
