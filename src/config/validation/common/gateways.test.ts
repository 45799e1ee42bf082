import assert from "node:assert/strict";
import { test } from "node:test";
import { collect, messages } from "../../../../test/support/validation.ts";
import { validateGatewayNames } from "./gateways.ts";

test("gateway names: ns/name parts must be DNS labels", () => {
  assert.deepEqual(collect((out) => validateGatewayNames(["mesh", "ns/gw"], false, out)).errors, []);
  assert.deepEqual(messages(collect((out) => validateGatewayNames(["ns/*", "*/gw", "/gw"], false, out)).errors), [
    'invalid value for gateway name: "*"',
    'invalid value for namespace: "*"',
    "config namespace and gateway name cannot be empty",
    'invalid value for namespace: ""',
  ]);
  assert.deepEqual(collect((out) => validateGatewayNames(["ns/My_GW"], true, out)).errors, []);
});

test("gateway names: the legacy name.namespace form warns and ends the check", () => {
  const r = collect((out) => validateGatewayNames(["gw.ns", "bad/*"], false, out));
  assert.deepEqual(r.errors, []);
  assert.deepEqual(messages(r.warnings), [
    'using legacy gatewayName format "gw.ns"; prefer the <namespace>/<name> format: "ns/gw"',
  ]);
  assert.deepEqual(messages(collect((out) => validateGatewayNames(["gw_1"], false, out)).errors), [
    'domain name "gw_1" invalid (label "gw_1" invalid)',
  ]);
});
