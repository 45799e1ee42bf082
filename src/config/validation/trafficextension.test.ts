import assert from "node:assert/strict";
import { test } from "node:test";
import { runSemantic } from "../../../test/support/validation.ts";
import type { Issue } from "../model.ts";
import { validateTrafficExtension } from "./trafficextension.ts";

function check(spec: unknown): Issue[] {
  return runSemantic(validateTrafficExtension, spec, {
    apiVersion: "extensions.istio.io/v1alpha1",
    kind: "TrafficExtension",
  }).errors;
}

const WASM = { url: "oci://ghcr.io/plugin:1" };

test("exactly one of wasm and lua", () => {
  assert.deepEqual(check({}), [{ path: "spec", message: "exactly one of wasm or lua must be set" }]);
  assert.deepEqual(check({ wasm: WASM, lua: { inlineCode: "x" } }), [
    { path: "spec", message: "exactly one of wasm or lua must be set" },
  ]);
  assert.deepEqual(check({ wasm: WASM }), []);
  assert.deepEqual(check({ lua: { inlineCode: "function envoy_on_request(h) end" } }), []);
});

test("lua code is not empty and at most 64 KiB", () => {
  assert.deepEqual(check({ lua: { inlineCode: "" } }), [
    { path: "spec.lua.inlineCode", message: "lua.inlineCode cannot be empty" },
  ]);
  assert.deepEqual(check({ lua: { inlineCode: "-".repeat(65537) } }), [
    { path: "spec.lua.inlineCode", message: "lua.inlineCode exceeds maximum size of 64KB" },
  ]);
});

test("the wasm module is checked as a WasmPlugin's, with TrafficExtension's pluginName wording", () => {
  assert.deepEqual(check({ wasm: { url: "fake://x", sha256: "foo", pluginName: "p".repeat(257) } }), [
    { path: "spec.wasm.url", message: "url contains unsupported scheme: fake" },
    { path: "spec.wasm.sha256", message: "sha256 field must be 64 characters long" },
    { path: "spec.wasm.pluginName", message: "pluginName field must be less than 256 characters long" },
  ]);
  assert.deepEqual(check({ wasm: { ...WASM, vmConfig: { env: [{ name: "a" }, { name: "a" }] } } }), [
    { path: "spec.wasm.vmConfig.env[1]", message: "duplicate env" },
  ]);
});

test("selector and targetRefs exclude each other; match ports are in range", () => {
  const errors = check({
    wasm: WASM,
    selector: { matchLabels: { app: "a" } },
    targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "g" }],
  });
  assert.equal(errors.length, 1, JSON.stringify(errors));
  assert.deepEqual(check({ wasm: WASM, match: [{ ports: [{ number: 0 }] }] }), [
    { path: "spec.match[0].ports[0].number", message: "spec.Match[0].Ports[0] is out of range: 0" },
  ]);
});
