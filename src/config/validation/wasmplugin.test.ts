import assert from "node:assert/strict";
import { test } from "node:test";
import { runSemantic } from "../../../test/support/validation.ts";
import type { Issue } from "../model.ts";
import { validateWasmPlugin } from "./wasmplugin.ts";

function check(spec: unknown): Issue[] {
  return runSemantic(validateWasmPlugin, spec, { apiVersion: "extensions.istio.io/v1alpha1", kind: "WasmPlugin" })
    .errors;
}

const URL = "oci://ghcr.io/plugin:1";

test("url is required and parsed as Go's ParseRequestURI, with an http:// retry", () => {
  assert.deepEqual(check({}), [{ path: "spec.url", message: "url field needs to be set" }]);
  for (const url of [URL, "http://test", "file:///opt/p.wasm", "example.com/p.wasm", "/opt/p.wasm"]) {
    assert.deepEqual(check({ url }), [], url);
  }
  assert.deepEqual(check({ url: "fake://example.com" }), [
    { path: "spec.url", message: "url contains unsupported scheme: fake" },
  ]);
  assert.deepEqual(check({ url: "#%blah$#@" }), [
    { path: "spec.url", message: `failed to parse url: parse "#%blah$#@": invalid URI for request` },
  ]);
});

test("sha256 is 64 lowercase hex characters", () => {
  assert.deepEqual(check({ url: URL, sha256: "foo" }), [
    { path: "spec.sha256", message: "sha256 field must be 64 characters long" },
  ]);
  assert.deepEqual(check({ url: URL, sha256: "A".repeat(64) }), [
    { path: "spec.sha256", message: "sha256 field must match [a-f0-9]{64} pattern" },
  ]);
  assert.deepEqual(check({ url: URL, sha256: "a".repeat(64) }), []);
});

test("imagePullSecret and pluginName length limits (with Istio's off-by-one wording)", () => {
  assert.deepEqual(check({ url: URL, imagePullSecret: "s".repeat(254), pluginName: "p".repeat(257) }), [
    { path: "spec.imagePullSecret", message: "imagePullSecret field must be less than 253 characters long" },
    { path: "spec.pluginName", message: "pluginName field must be less than 255 characters long" },
  ]);
  assert.deepEqual(check({ url: URL, pluginName: "p".repeat(256) }), []);
});

test("vmConfig.env: first problem only; nulls skipped; names unique; value only when INLINE", () => {
  assert.deepEqual(
    check({ url: URL, vmConfig: { env: [null, { name: "" }, { name: "a", valueFrom: "HOST", value: "v" }] } }),
    [{ path: "spec.vmConfig.env[1]", message: "spec.vmConfig.env invalid" }],
  );
  assert.deepEqual(check({ url: URL, vmConfig: { env: [{ name: "a" }, { name: "a" }] } }), [
    { path: "spec.vmConfig.env[1]", message: "duplicate env" },
  ]);
  assert.deepEqual(check({ url: URL, vmConfig: { env: [{ name: "a", valueFrom: "HOST", value: "v" }] } }), [
    { path: "spec.vmConfig.env[0]", message: "value may only be set when valueFrom is INLINE" },
  ]);
  assert.deepEqual(
    check({
      url: URL,
      vmConfig: {
        env: [
          { name: "a", value: "v" },
          { name: "b", valueFrom: "HOST" },
        ],
      },
    }),
    [],
  );
});

test("match: nil selectors and ports, port numbers in 1..65535; first problem only", () => {
  assert.deepEqual(check({ url: URL, match: [null, { ports: [{ number: 0 }] }] }), [
    { path: "spec.match[0]", message: "spec.Match[0] is nil" },
  ]);
  assert.deepEqual(check({ url: URL, match: [{ ports: [{ number: 80 }, null] }] }), [
    { path: "spec.match[0].ports[1]", message: "spec.Match[0].Ports[1] is nil" },
  ]);
  assert.deepEqual(check({ url: URL, match: [{ ports: [{ number: 65536 }] }] }), [
    { path: "spec.match[0].ports[0].number", message: "spec.Match[0].Ports[0] is out of range: 65536" },
  ]);
});

test("enum fields reject unknown names", () => {
  assert.deepEqual(check({ url: URL, phase: "LAST" }), [
    { path: "spec.phase", message: `unknown value "\\"LAST\\"" for enum istio.extensions.v1alpha1.PluginPhase` },
  ]);
});
