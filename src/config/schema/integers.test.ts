// Every integer field of every kind's schema holds exactly its type's range: the largest and smallest values
// it can hold are accepted, the next ones out (and 1e20, 1e21, 1.5) are refused at the field's path.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KINDS, type KindInfo } from "../kinds.ts";
import type { ConfigObject } from "../model.ts";
import { Findings } from "../validation/findings.ts";
import { schemaFor, validateStructure } from "./index.ts";
import type { Schema } from "./types.ts";

/** How to reach a field from its parent: a property, the first item of a list, an entry of a map. */
type Step = { property: string } | "item" | "entry";

interface IntegerField {
  path: string;
  steps: Step[];
  schema: Schema;
}

function integerFields(schema: Schema, path: string, steps: Step[], out: IntegerField[]): IntegerField[] {
  if (schema.type === "integer") out.push({ path, steps, schema });
  for (const [name, sub] of Object.entries(schema.properties ?? {})) {
    if (path === "" && name === "metadata") continue;
    integerFields(sub, path === "" ? name : `${path}.${name}`, [...steps, { property: name }], out);
  }
  if (schema.items) integerFields(schema.items, `${path}[0]`, [...steps, "item"], out);
  if (typeof schema.additionalProperties === "object") {
    integerFields(schema.additionalProperties, `${path}.key`, [...steps, "entry"], out);
  }
  return out;
}

/** The object that holds `value` at the end of `steps`, and nothing else. */
function objectWith(info: KindInfo, version: string, steps: Step[], value: number): ConfigObject {
  let inner: unknown = value;
  for (const step of [...steps].reverse()) {
    if (step === "item") inner = [inner];
    else if (step === "entry") inner = { key: inner };
    else inner = { [step.property]: inner };
  }
  return {
    apiVersion: `${info.group}/${version}`,
    kind: info.kind,
    metadata: { name: "x", namespace: "default" },
    ...(inner as Record<string, unknown>),
  };
}

/**
 * A type's range as doubles: the values at its ends, and the next doubles out. 2^63-1 and 2^64-1 are not
 * doubles: the largest double an int64 (uint64) holds is 2^63-1024 (2^64-2048), the next one up 2^63 (2^64).
 */
interface Range {
  type: string;
  min: number;
  max: number;
  below: number;
  above: number;
}
const INT32: Range = { type: "int32", min: -(2 ** 31), max: 2 ** 31 - 1, below: -(2 ** 31) - 1, above: 2 ** 31 };
const UINT32: Range = { type: "uint32", min: 0, max: 2 ** 32 - 1, below: -1, above: 2 ** 32 };
const INT64: Range = { type: "int64", min: -(2 ** 63), max: 2 ** 63 - 1024, below: -(2 ** 63) - 2048, above: 2 ** 63 };
const UINT64: Range = { type: "uint64", min: 0, max: 2 ** 64 - 2048, below: -1, above: 2 ** 64 };

/**
 * The type of a field, from how its family's CRD generator writes each type: Istio's protoc-gen-crd (istio/tools)
 * int32 and int64 with their format, uint32 as minimum 0 and maximum 2^32-1, uint64 as minimum 0 alone;
 * controller-gen (Gateway API) int32 and int64 with their format, a Go int with none.
 */
function typeOf(info: KindInfo, schema: Schema): Range {
  if (schema.format === "int32") return INT32;
  if (schema.format === "int64") return INT64;
  assert.equal(schema.format, undefined, `unexpected integer format ${schema.format}`);
  if (info.family === "gateway-api") return INT64;
  if (schema.maximum === 2 ** 32 - 1) return UINT32;
  if (schema.minimum === 0 && schema.maximum === undefined) return UINT64;
  // A marker replaced both bounds (a port, a status code): they must lie within a uint32.
  assert.ok(schema.minimum !== undefined && schema.minimum >= 0, `no type for ${JSON.stringify(schema)}`);
  assert.ok(schema.maximum !== undefined && schema.maximum <= UINT32.max, `no type for ${JSON.stringify(schema)}`);
  return UINT32;
}

/** The field's range: its type's, narrowed by the schema's bounds. */
function rangeOf(info: KindInfo, schema: Schema): Range {
  assert.ok(!schema.exclusiveMaximum && !schema.exclusiveMinimum, "exclusive bounds are not expected");
  const range = { ...typeOf(info, schema) };
  if (schema.maximum !== undefined && schema.maximum < range.max) {
    range.max = schema.maximum;
    range.above = schema.maximum + 1;
  }
  if (schema.minimum !== undefined && schema.minimum > range.min) {
    range.min = schema.minimum;
    range.below = schema.minimum - 1;
  }
  return range;
}

// Errors about a number's range or type, as opposed to an enum or a CEL rule on the field.
const RANGE_ERROR =
  /in body should be (less|greater) than|in body must be of type integer|^json: cannot unmarshal number /;

function rangeErrors(info: KindInfo, version: string, field: IntegerField, value: number): string[] {
  const out = new Findings("");
  validateStructure(objectWith(info, version, field.steps, value), info, out);
  return out.errors.filter((e) => e.path === field.path && RANGE_ERROR.test(e.message)).map((e) => e.message);
}

/** Each (version, schema) of a kind once: versions with identical schemas share one. */
function distinctSchemas(info: KindInfo): [string, Schema][] {
  const seen = new Set<Schema>();
  const out: [string, Schema][] = [];
  for (const version of info.versions) {
    const schema = schemaFor(info, version);
    if (schema && !seen.has(schema)) {
      seen.add(schema);
      out.push([version, schema]);
    }
  }
  return out;
}

describe("integer fields hold their type's range", () => {
  for (const info of KINDS.filter((k) => k.hasSchema)) {
    for (const [version, schema] of distinctSchemas(info)) {
      it(`${info.kind} ${version}`, () => {
        const fields = integerFields(schema, "", [], []);
        const failures: string[] = [];
        for (const field of fields) {
          const range = rangeOf(info, field.schema);
          for (const value of [range.min, range.max]) {
            const errors = rangeErrors(info, version, field, value);
            if (errors.length > 0) failures.push(`${field.path} = ${value} (${range.type}) refused: ${errors}`);
          }
          const refused = [range.above, range.below, 1e20, 1e21, 1.5];
          for (const value of refused) {
            if (rangeErrors(info, version, field, value).length === 0) {
              failures.push(`${field.path} = ${value} (${range.type}) accepted`);
            }
          }
        }
        assert.deepEqual(failures, []);
      });
    }
  }

  it("finds the integer fields of every kind that has them", () => {
    const counted = (kind: string) => {
      const info = KINDS.find((k) => k.kind === kind && k.family !== "kubernetes");
      assert.ok(info);
      return integerFields(schemaFor(info, info.preferredVersion) ?? {}, "", [], []).map((f) => f.path);
    };
    assert.ok(counted("VirtualService").includes("spec.http[0].route[0].weight"));
    assert.ok(counted("ServiceEntry").includes("spec.endpoints[0].ports.key"));
    assert.ok(counted("HTTPRoute").includes("spec.rules[0].filters[0].requestMirror.fraction.denominator"));
  });
});
