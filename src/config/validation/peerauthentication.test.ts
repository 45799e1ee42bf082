import assert from "node:assert/strict";
import { test } from "node:test";
import { runSemantic } from "../../../test/support/validation.ts";
import type { ValidationResult } from "../model.ts";
import { validatePeerAuthentication } from "./peerauthentication.ts";

function check(spec: unknown): ValidationResult {
  return runSemantic(validatePeerAuthentication, spec, {
    apiVersion: "security.istio.io/v1",
    kind: "PeerAuthentication",
  });
}

const STRICT = { mode: "STRICT" };

test("port-level mTLS needs a selector with labels", () => {
  const expected = [
    { path: "spec.portLevelMtls", message: "mesh/namespace peer authentication cannot have port level mTLS" },
  ];
  assert.deepEqual(check({ portLevelMtls: { 80: STRICT } }).errors, expected);
  assert.deepEqual(check({ selector: { matchLabels: {} }, portLevelMtls: { 80: STRICT } }).errors, expected);
  assert.deepEqual(check({ selector: { matchLabels: { app: "a" } }, portLevelMtls: { 80: STRICT } }).errors, []);
});

test("an empty portLevelMtls map is present and rejected", () => {
  assert.deepEqual(check({ selector: { matchLabels: { a: "b" } }, portLevelMtls: {} }).errors, [
    { path: "spec.portLevelMtls", message: "port level mTLS, if defined, must have at least one element" },
  ]);
});

test("port keys must be in 1..65535 and decode as uint32", () => {
  const selector = { matchLabels: { a: "b" } };
  assert.deepEqual(check({ selector, portLevelMtls: { 0: STRICT, 42949672: STRICT } }).errors, [
    { path: "spec.portLevelMtls.0", message: "port must be in range 1..65535" },
    { path: "spec.portLevelMtls.42949672", message: "port must be in range 1..65535" },
  ]);
  assert.deepEqual(check({ selector, portLevelMtls: { acd: STRICT } }).errors, [
    { path: "spec.portLevelMtls.acd", message: `invalid map key "acd": expected a uint32` },
  ]);
});

test("mTLS mode must be a known enum name", () => {
  assert.deepEqual(check({ mtls: { mode: "BLAH" } }).errors, [
    {
      path: "spec.mtls.mode",
      message: `unknown value "\\"BLAH\\"" for enum istio.security.v1beta1.PeerAuthentication.MutualTLS.Mode`,
    },
  ]);
  assert.deepEqual(check({ mtls: { mode: 2 } }).errors, []);
});

test("selector errors and the no-labels warning", () => {
  const { errors, warnings } = check({ selector: { matchLabels: { "a*": "b" } } });
  assert.deepEqual(errors, [
    { path: "spec.selector.matchLabels", message: `wildcard is not supported in selector: "a*=b"` },
  ]);
  assert.deepEqual(check({ selector: {} }).warnings, [
    { path: "spec.selector", message: "workload selector specified without labels" },
  ]);
  assert.deepEqual(warnings, []);
});
