import assert from "node:assert/strict";
import { test } from "node:test";
import { runSemantic } from "../../../test/support/validation.ts";
import type { ValidationResult } from "../model.ts";
import { validateTelemetry } from "./telemetry.ts";

function check(spec: unknown): ValidationResult {
  return runSemantic(validateTelemetry, spec, { apiVersion: "telemetry.istio.io/v1", kind: "Telemetry" });
}

test("selector and targetRef rules apply", () => {
  assert.deepEqual(check({ targetRef: { kind: "Pod", name: "p" } }).errors, [
    {
      path: "spec.targetRef",
      message:
        "targetRef must be to one of [core/v1/Service networking.istio.io/v1/ServiceEntry gateway.networking.k8s.io/v1/Gateway gateway.networking.k8s.io/v1/GatewayClass] but was /Pod",
    },
  ]);
});

test("providers need a name; only the first unnamed one is reported", () => {
  assert.deepEqual(check({ metrics: [{ providers: [{ name: "p" }, null, { name: "" }] }] }).errors, [
    { path: "spec.metrics[0].providers[1]", message: "providers.name may not be empty" },
  ]);
  assert.deepEqual(check({ accessLogging: [{ providers: [{}] }] }).errors, [
    { path: "spec.accessLogging[0].providers[0]", message: "providers.name may not be empty" },
  ]);
});

test("metric overrides: null override or tag, UPSERT needs a value (also by default), REMOVE forbids one", () => {
  const { errors, warnings } = check({
    metrics: [
      {
        overrides: [
          null,
          {
            tagOverrides: {
              a: null,
              b: {},
              c: { operation: "UPSERT" },
              d: { operation: "REMOVE", value: "x" },
              "": { value: "v" },
            },
          },
        ],
      },
    ],
  });
  assert.deepEqual(errors, [
    { path: "spec.metrics[0].overrides[0]", message: "tagOverrides may not be null" },
    { path: "spec.metrics[0].overrides[1].tagOverrides.a", message: "tagOverrides may not be null" },
    {
      path: "spec.metrics[0].overrides[1].tagOverrides.b",
      message: "tagOverrides.value must be set when operation is UPSERT",
    },
    {
      path: "spec.metrics[0].overrides[1].tagOverrides.c",
      message: "tagOverrides.value must be set when operation is UPSERT",
    },
    {
      path: "spec.metrics[0].overrides[1].tagOverrides.d",
      message: "tagOverrides.value may only be set when operation is UPSERT",
    },
  ]);
  assert.deepEqual(warnings, [
    { path: "spec.metrics[0].overrides[1].tagOverrides", message: "tagOverrides.name may not be empty" },
  ]);
});

test("metric match: customMetric may not be empty; metric and mode are enums; reportingInterval decodes", () => {
  assert.deepEqual(check({ metrics: [{ overrides: [{ match: { customMetric: "" } }] }] }).errors, [
    { path: "spec.metrics[0].overrides[0].match.customMetric", message: "customMetric may not be empty" },
  ]);
  assert.deepEqual(
    check({ metrics: [{ reportingInterval: "5x", overrides: [{ match: { metric: "BYTES" } }] }] }).errors.map(
      (e) => e.message,
    ),
    [
      `bad Duration: time: unknown unit "x" in duration "5x"`,
      `unknown value "\\"BYTES\\"" for enum istio.telemetry.v1alpha1.MetricSelector.IstioMetric`,
    ],
  );
});

test("tracing: multiple entries or providers warn; sampling percentage within [0, 100]", () => {
  const { errors, warnings } = check({
    tracing: [{ providers: [{ name: "a" }, { name: "b" }], randomSamplingPercentage: 101 }, null],
  });
  assert.deepEqual(errors, [
    {
      path: "spec.tracing[0].randomSamplingPercentage",
      message: "randomSamplingPercentage must be in range [0.0, 100.0]",
    },
  ]);
  assert.deepEqual(warnings, [
    { path: "spec.tracing", message: "multiple tracing is not currently supported" },
    { path: "spec.tracing[0].providers", message: "multiple providers is not currently supported" },
  ]);
});

test("tracing custom tags: name, nil value, empty literal, header and environment names", () => {
  const { errors } = check({
    tracing: [
      {
        customTags: {
          "": { literal: { value: "x" } },
          n: null,
          l: { literal: {} },
          h: { header: {} },
          e: { environment: { defaultValue: "d" } },
        },
      },
    ],
  });
  assert.deepEqual(errors, [
    { path: "spec.tracing[0].customTags", message: "tag name may not be empty" },
    { path: "spec.tracing[0].customTags.n", message: "tag 'n' may not have a nil value" },
    { path: "spec.tracing[0].customTags.l.literal.value", message: "literal tag value may not be empty" },
    { path: "spec.tracing[0].customTags.h.header.name", message: "header tag name may not be empty" },
    { path: "spec.tracing[0].customTags.e.environment.name", message: "environment tag name may not be empty" },
  ]);
});

test("access log filter must parse as CEL", () => {
  assert.deepEqual(check({ accessLogging: [{ filter: { expression: "response.code >= 400" } }] }).errors, []);
  const { errors } = check({ accessLogging: [{ filter: { expression: "response.code >=" } }] });
  assert.equal(errors.length, 1);
  assert.equal(errors[0].path, "spec.accessLogging[0].filter.expression");
  assert.match(errors[0].message, /^must be a valid CEL expression, /);
});
