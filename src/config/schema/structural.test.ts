import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Findings } from "../validation/findings.ts";
import { applyDefaults, validateValue } from "./structural.ts";
import type { Schema } from "./types.ts";

function check(value: unknown, schema: Schema): string[] {
  const out = new Findings("");
  validateValue(value, schema, "spec", out);
  return out.errors.map((issue) => `${issue.path}: ${issue.message}`);
}

const obj = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({
  type: "object",
  properties,
  ...extra,
});

describe("structural schema validation", () => {
  it("reports a type mismatch as kube-openapi does", () => {
    assert.deepEqual(check({ port: "80" }, obj({ port: { type: "integer" } })), [
      'spec.port: Invalid value: "string": spec.port in body must be of type integer: "string"',
    ]);
    assert.deepEqual(check({ port: 1.5 }, obj({ port: { type: "integer" } })), [
      'spec.port: Invalid value: "number": spec.port in body must be of type integer: "number"',
    ]);
    assert.deepEqual(check({ weight: 3 }, obj({ weight: { type: "number" } })), [], "an integer is a number");
  });

  it("rejects explicit null unless the field is nullable", () => {
    assert.deepEqual(check(null, { type: "object" }), [
      'spec: Invalid value: "null": spec in body must be of type object: "null"',
    ]);
    assert.deepEqual(check(null, { type: "object", nullable: true }), []);
  });

  it("accepts both an integer and a string for x-kubernetes-int-or-string", () => {
    const schema = obj({ port: { "x-kubernetes-int-or-string": true } });
    assert.deepEqual(check({ port: 80 }, schema), []);
    assert.deepEqual(check({ port: "http" }, schema), []);
    assert.deepEqual(check({ port: true }, schema), [
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
    ]);
  });

  it("reports missing required fields and unknown fields", () => {
    const schema = obj({ host: { type: "string" }, nested: obj({ a: { type: "string" } }) }, { required: ["host"] });
    assert.deepEqual(check({ nested: { a: "x", b: 1 }, extra: true }, schema), [
      "spec.host: Required value",
      'spec.nested.b: unknown field "spec.nested.b"',
      'spec.extra: unknown field "spec.extra"',
    ]);
  });

  it("keeps unknown fields under x-kubernetes-preserve-unknown-fields and checks map values", () => {
    const schema = obj({
      config: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      labels: { type: "object", additionalProperties: { type: "string" } },
    });
    assert.deepEqual(check({ config: { any: { thing: 1 } }, labels: { a: "b", c: 1 } }, schema), [
      'spec.labels.c: Invalid value: "integer": spec.labels.c in body must be of type string: "integer"',
    ]);
  });

  it("lists the supported values of an enum", () => {
    assert.deepEqual(check("FOO", { type: "string", enum: ["A", "B"] }), [
      'spec: Unsupported value: "FOO": supported values: "A", "B"',
    ]);
  });

  it("checks string length, pattern and format", () => {
    assert.deepEqual(check("", { type: "string", minLength: 1 }), [
      'spec: Invalid value: "": spec in body should be at least 1 chars long',
    ]);
    assert.deepEqual(check("abcd", { type: "string", maxLength: 3 }), ["spec: Too long: may not be more than 3 bytes"]);
    assert.deepEqual(check("Ab", { type: "string", pattern: "^[a-z]+$" }), [
      "spec: Invalid value: \"Ab\": spec in body should match '^[a-z]+$'",
    ]);
    assert.deepEqual(check("2024-01-02T03:04:05Z", { type: "string", format: "date-time" }), []);
    assert.deepEqual(check("yesterday", { type: "string", format: "date-time" }), [
      'spec: Invalid value: "yesterday": spec in body must be of type date-time: "yesterday"',
    ]);
  });

  it("checks numeric bounds, inclusive and exclusive", () => {
    assert.deepEqual(check(101, { type: "integer", maximum: 100 }), [
      "spec: Invalid value: 101: spec in body should be less than or equal to 100",
    ]);
    assert.deepEqual(check(0, { type: "integer", minimum: 0, exclusiveMinimum: true }), [
      "spec: Invalid value: 0: spec in body should be greater than 0",
    ]);
    assert.deepEqual(check(100, { type: "integer", maximum: 100 }), []);
  });

  it("refuses an integer its field's type cannot hold with Go's json error, as Istio's decoder does", () => {
    const int32: Schema = { type: "integer", format: "int32" };
    assert.deepEqual(check(2147483647, int32), []);
    assert.deepEqual(check(4294967296, int32), [
      "spec: json: cannot unmarshal number 4294967296 into Go value of type int32",
    ]);
    assert.deepEqual(check(-2147483649, int32), [
      "spec: json: cannot unmarshal number -2147483649 into Go value of type int32",
    ]);
    // Go re-encodes the number from a float64: digits below 1e21, an exponent from there.
    assert.deepEqual(check(1e20, int32), [
      "spec: json: cannot unmarshal number 100000000000000000000 into Go value of type int32",
    ]);
    assert.deepEqual(check(1e21, int32), ["spec: json: cannot unmarshal number 1e+21 into Go value of type int32"]);
    // Istio's uint64: minimum 0 and no maximum; 2^64 is the first double a uint64 cannot hold.
    const uint64: Schema = { type: "integer", minimum: 0 };
    assert.deepEqual(check(2 ** 64 - 2048, uint64), []);
    assert.deepEqual(check(2 ** 64, uint64), [
      "spec: json: cannot unmarshal number 18446744073709552000 into Go value of type uint64",
    ]);
    // No format (a Go int, or Istio's int64 with a marker's bounds): int64.
    assert.deepEqual(check(2 ** 63 - 1024, { type: "integer", minimum: 1 }), []);
    assert.deepEqual(check(2 ** 63, { type: "integer", minimum: 1 }), [
      "spec: json: cannot unmarshal number 9223372036854776000 into Go value of type int64",
    ]);
  });

  it("leaves an integer its schema's bounds refuse to the bounds' message", () => {
    const uint32: Schema = { type: "integer", minimum: 0, maximum: 4294967295 };
    assert.deepEqual(check(4294967295, uint32), []);
    assert.deepEqual(check(4294967296, uint32), [
      "spec: Invalid value: 4294967296: spec in body should be less than or equal to 4294967295",
    ]);
    assert.deepEqual(check(-1, uint32), ["spec: Invalid value: -1: spec in body should be greater than or equal to 0"]);
  });

  it("checks item and property counts", () => {
    assert.deepEqual(check([1, 2, 3], { type: "array", maxItems: 2, items: { type: "integer" } }), [
      "spec: Too many: 3: must have at most 2 items",
    ]);
    assert.deepEqual(check([], { type: "array", minItems: 1 }), [
      "spec: Invalid value: 0: spec in body should have at least 1 items",
    ]);
    assert.deepEqual(check({}, { type: "object", minProperties: 1, additionalProperties: { type: "string" } }), [
      "spec: Invalid value: 1: spec in body should have at least 1 properties",
    ]);
  });

  it("reports duplicates in list-type set and map lists", () => {
    const set: Schema = { type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" };
    assert.deepEqual(check(["a", "b", "a"], set), ['spec[2]: Duplicate value: "a"']);
    const map: Schema = {
      type: "array",
      items: obj({ name: { type: "string" }, port: { type: "integer" } }),
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name", "port"],
    };
    assert.deepEqual(
      check(
        [
          { name: "a", port: 1 },
          { name: "a", port: 2 },
          { name: "a", port: 1 },
        ],
        map,
      ),
      ['spec[2]: Duplicate value: map[string]interface {}{"name":"a", "port":1}'],
    );
  });

  it("enforces proto oneofs encoded as oneOf + not anyOf", () => {
    // Istio's encoding of `oneof match { exact, prefix }`: at most one of the fields.
    const schema = obj(
      { exact: { type: "string" }, prefix: { type: "string" } },
      {
        oneOf: [
          { not: { anyOf: [{ required: ["exact"] }, { required: ["prefix"] }] } },
          { required: ["exact"] },
          { required: ["prefix"] },
        ],
      },
    );
    assert.deepEqual(check({}, schema), []);
    assert.deepEqual(check({ exact: "/a" }, schema), []);
    assert.deepEqual(check({ exact: "/a", prefix: "/b" }, schema), [
      'spec: Invalid value: "": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives',
    ]);
  });

  it("evaluates CEL rules with their message, or the rule when there is none", () => {
    const schema: Schema = {
      type: "string",
      "x-kubernetes-validations": [
        { rule: 'self != "*"', message: "hostname cannot be wildcard" },
        { rule: "size(self) < 3" },
      ],
    };
    assert.deepEqual(check("ok", schema), []);
    assert.deepEqual(check("*", schema), ['spec: Invalid value: "string": hostname cannot be wildcard']);
    assert.deepEqual(check("****", schema), ['spec: Invalid value: "string": failed rule: size(self) < 3']);
  });

  it("prefers a rule's messageExpression", () => {
    const schema: Schema = {
      type: "integer",
      "x-kubernetes-validations": [
        { rule: "self < 10", message: "too big", messageExpression: "'got ' + string(self)" },
      ],
    };
    assert.deepEqual(check(12, schema), ['spec: Invalid value: "integer": got 12']);
  });

  it("skips transition rules (oldSelf) on create", () => {
    const schema: Schema = {
      type: "string",
      "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "immutable" }],
    };
    assert.deepEqual(check("a", schema), []);
  });

  it("reports a rule that fails to evaluate", () => {
    const schema: Schema = {
      type: "string",
      "x-kubernetes-validations": [{ rule: "duration(self) >= duration('1ms')", message: "must be a valid duration" }],
    };
    const [error] = check("soon", schema);
    assert.match(error, /^spec: Invalid value: "string": .* evaluating rule: must be a valid duration$/);
  });

  it("applies defaults before CEL rules see the object", () => {
    const schema = obj(
      {
        group: { type: "string", default: "" },
        kind: { type: "string", default: "Service" },
        port: { type: "integer" },
      },
      {
        "x-kubernetes-validations": [
          {
            rule: "(size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true",
            message: "Must have port",
          },
        ],
      },
    );
    const value: Record<string, unknown> = {};
    applyDefaults(value, schema);
    assert.deepEqual(value, { group: "", kind: "Service" });
    assert.deepEqual(check(value, schema), ['spec: Invalid value: "object": Must have port']);
  });
});
