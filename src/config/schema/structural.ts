// Validation of a JSON value against a CRD structural schema, as the Kubernetes API server does it: OpenAPI
// value checks (kube-openapi), list-set/map uniqueness, unknown fields (strict field validation) and CEL rules;
// then, as Istio's decoder, the range of each integer field's type.
// Messages follow Kubernetes' field errors: the Issue path is the field, the message the error body.
import { isIPv4, isIPv6 } from "node:net";
import { Findings } from "../validation/findings.ts";
import { compileRule, isTransitionRule, toCelValue } from "./cel.ts";
import type { Schema, ValidationRule } from "./types.ts";

type JsonType = "null" | "object" | "array" | "string" | "boolean" | "integer" | "number";

function jsonType(value: unknown): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value as JsonType;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function childPath(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

/** A value as Go's `%q`/`%v` print it in a field error. */
function goValue(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** Go's `%#v` of a map[string]interface{}, as list-map duplicate errors print the key fields. */
function goMap(entries: [string, unknown][]): string {
  const fields = entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `"${k}":${goValue(v)}`);
  return `map[string]interface {}{${fields.join(", ")}}`;
}

const patterns = new Map<string, RegExp>();
function regex(pattern: string): RegExp {
  let compiled = patterns.get(pattern);
  if (!compiled) {
    compiled = new RegExp(pattern);
    patterns.set(pattern, compiled);
  }
  return compiled;
}

const FORMAT_CHECKS: Record<string, (text: string) => boolean> = {
  "date-time": (text) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(text),
  ipv4: isIPv4,
  ipv6: isIPv6,
  byte: (text) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text),
};

/** Fills in schema defaults where a property is absent, recursively, as the API server does before validating. */
export function applyDefaults(value: unknown, schema: Schema): void {
  if (Array.isArray(value)) {
    if (schema.items) for (const item of value) applyDefaults(item, schema.items);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    if (value[key] === undefined && sub.default !== undefined) value[key] = structuredClone(sub.default);
    if (value[key] !== undefined) applyDefaults(value[key], sub);
  }
  const additional = schema.additionalProperties;
  if (typeof additional === "object") {
    for (const [key, item] of Object.entries(value)) if (!schema.properties?.[key]) applyDefaults(item, additional);
  }
}

/**
 * Validates `value` at `path` against `schema`. `structural` is false inside oneOf/anyOf/allOf/not, whose
 * branches only constrain values: there, unknown fields, list types and CEL rules do not apply.
 */
export function validateValue(value: unknown, schema: Schema, path: string, out: Findings, structural = true): void {
  const actual = jsonType(value);
  if (value === null) {
    if ((schema.type || schema["x-kubernetes-int-or-string"]) && !schema.nullable) {
      out.at(path).error(`Invalid value: "null": ${path} in body must be of type ${expectedTypes(schema)}: "null"`);
    }
    return;
  }
  const expected = expectedTypes(schema);
  if (expected !== "" && !expected.split(",").includes(actual) && !(actual === "integer" && expected === "number")) {
    out.at(path).error(`Invalid value: "${actual}": ${path} in body must be of type ${expected}: "${actual}"`);
    return;
  }
  if (typeof value === "string" && schema.format && FORMAT_CHECKS[schema.format]?.(value) === false) {
    out
      .at(path)
      .error(`Invalid value: ${goValue(value)}: ${path} in body must be of type ${schema.format}: ${goValue(value)}`);
  }
  validateCombinators(value, schema, path, out);
  if (typeof value === "string") validateString(value, schema, path, out);
  if (typeof value === "number") validateNumber(value, schema, path, out);
  if (schema.enum && !schema.enum.some((allowed) => allowed === value)) {
    const supported = schema.enum.map((allowed) =>
      JSON.stringify(typeof allowed === "string" ? allowed : JSON.stringify(allowed)),
    );
    out.at(path).error(`Unsupported value: ${goValue(value)}: supported values: ${supported.join(", ")}`);
  }
  if (Array.isArray(value)) validateArray(value, schema, path, out, structural);
  if (isObject(value)) validateObject(value, schema, path, out, structural);
  if (structural && schema["x-kubernetes-validations"]) {
    validateRules(value, schema, schema["x-kubernetes-validations"], path, out);
  }
}

function expectedTypes(schema: Schema): string {
  if (schema["x-kubernetes-int-or-string"]) return "integer,string";
  return schema.type ?? "";
}

function validateCombinators(value: unknown, schema: Schema, path: string, out: Findings): void {
  const passes = (sub: Schema) => {
    const scratch = new Findings("");
    validateValue(value, sub, path, scratch, false);
    return scratch.ok;
  };
  const quoted = JSON.stringify(path);
  if (schema.anyOf && !schema.anyOf.some(passes)) {
    out.at(path).error(`Invalid value: "": ${quoted} must validate at least one schema (anyOf)`);
  }
  if (schema.oneOf) {
    const valid = schema.oneOf.filter(passes).length;
    if (valid !== 1) {
      const detail = valid === 0 ? "Found none valid" : `Found ${valid} valid alternatives`;
      out.at(path).error(`Invalid value: "": ${quoted} must validate one and only one schema (oneOf). ${detail}`);
    }
  }
  if (schema.allOf) {
    // Each branch reports its own errors, as kube-openapi merges them.
    for (const sub of schema.allOf) validateValue(value, sub, path, out, false);
  }
  if (schema.not && passes(schema.not)) {
    out.at(path).error(`Invalid value: "": ${quoted} must not validate the schema (not)`);
  }
}

function validateString(value: string, schema: Schema, path: string, out: Findings): void {
  const length = [...value].length;
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    out.at(path).error(`Too long: may not be more than ${schema.maxLength} bytes`);
  }
  if (schema.minLength !== undefined && length < schema.minLength) {
    out
      .at(path)
      .error(`Invalid value: ${goValue(value)}: ${path} in body should be at least ${schema.minLength} chars long`);
  }
  if (schema.pattern !== undefined && !regex(schema.pattern).test(value)) {
    out.at(path).error(`Invalid value: ${goValue(value)}: ${path} in body should match '${schema.pattern}'`);
  }
}

function validateNumber(value: number, schema: Schema, path: string, out: Findings): void {
  const { maximum, minimum } = schema;
  let inBounds = true;
  if (maximum !== undefined && (schema.exclusiveMaximum ? value >= maximum : value > maximum)) {
    const relation = schema.exclusiveMaximum ? "less than" : "less than or equal to";
    out.at(path).error(`Invalid value: ${value}: ${path} in body should be ${relation} ${maximum}`);
    inBounds = false;
  }
  if (minimum !== undefined && (schema.exclusiveMinimum ? value <= minimum : value < minimum)) {
    const relation = schema.exclusiveMinimum ? "greater than" : "greater than or equal to";
    out.at(path).error(`Invalid value: ${value}: ${path} in body should be ${relation} ${minimum}`);
    inBounds = false;
  }
  // The API server drops the integer formats of a CRD schema, so a value within the schema's bounds reaches
  // Istio's decoder, which refuses one its field's type cannot hold, with Go's json error.
  if (schema.type === "integer" && inBounds) {
    const type = integerType(schema);
    if (value < type.min || value >= type.limit) {
      out.at(path).error(`json: cannot unmarshal number ${value} into Go value of type ${type.name}`);
    }
  }
}

/** An integer type: its Go name and its range, `limit` excluded. */
interface IntegerType {
  name: "int32" | "uint32" | "int64" | "uint64";
  min: number;
  limit: number;
}

// Exact doubles: 2^63 - 1 and 2^64 - 1 are not doubles, but every double below 2^63 (2^64) fits an int64
// (uint64). Go sees the same doubles: Istio re-encodes the object's numbers from float64 before decoding.
const INT32: IntegerType = { name: "int32", min: -(2 ** 31), limit: 2 ** 31 };
const UINT32: IntegerType = { name: "uint32", min: 0, limit: 2 ** 32 };
const INT64: IntegerType = { name: "int64", min: -(2 ** 63), limit: 2 ** 63 };
const UINT64: IntegerType = { name: "uint64", min: 0, limit: 2 ** 64 };

/**
 * The type behind an integer field, which CRD schemas give only as the generators write it: format int32 and
 * int64 as such; Istio's protoc-gen-crd writes uint32 (and UInt32Value) as minimum 0, maximum 2^32-1 and uint64
 * as minimum 0 with no maximum; controller-gen (Gateway API) writes a Go int with no format (and none of theirs
 * has minimum 0 alone). A field whose bounds a marker replaced is read as int64: its bounds lie within its
 * type's range anyway.
 */
function integerType(schema: Schema): IntegerType {
  if (schema.format === "int32") return INT32;
  if (schema.format === "int64") return INT64;
  if (schema.maximum === UINT32.limit - 1) return UINT32;
  if (schema.minimum === 0 && schema.maximum === undefined) return UINT64;
  return INT64;
}

function validateArray(value: unknown[], schema: Schema, path: string, out: Findings, structural: boolean): void {
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    out.at(path).error(`Too many: ${value.length}: must have at most ${schema.maxItems} items`);
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    out.at(path).error(`Invalid value: ${value.length}: ${path} in body should have at least ${schema.minItems} items`);
  }
  if (schema.items) {
    const items = schema.items;
    for (const [i, item] of value.entries()) validateValue(item, items, `${path}[${i}]`, out, structural);
  }
  if (structural) validateListType(value, schema, path, out);
}

/** `x-kubernetes-list-type`: set items and map-list keys must be unique (`Duplicate value`). */
function validateListType(value: unknown[], schema: Schema, path: string, out: Findings): void {
  const listType = schema["x-kubernetes-list-type"];
  if (listType !== "set" && listType !== "map") return;
  const keys = schema["x-kubernetes-list-map-keys"] ?? [];
  const seen = new Set<string>();
  for (const [i, item] of value.entries()) {
    let identity: string;
    let shown: string;
    if (listType === "set") {
      identity = JSON.stringify(item);
      shown = isObject(item) || Array.isArray(item) ? identity : goValue(item);
    } else {
      if (!isObject(item)) continue;
      const entries = keys.filter((key) => item[key] !== undefined).map((key): [string, unknown] => [key, item[key]]);
      identity = JSON.stringify(entries);
      shown = goMap(entries);
    }
    if (seen.has(identity)) out.at(`${path}[${i}]`).error(`Duplicate value: ${shown}`);
    seen.add(identity);
  }
}

function validateObject(
  value: Record<string, unknown>,
  schema: Schema,
  path: string,
  out: Findings,
  structural: boolean,
): void {
  const count = Object.keys(value).length;
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    out.at(path).error(`Too many: ${count}: must have at most ${schema.maxProperties} items`);
  }
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    const min = schema.minProperties;
    out.at(path).error(`Invalid value: ${min}: ${path} in body should have at least ${min} properties`);
  }
  for (const name of schema.required ?? []) {
    if (value[name] === undefined) out.at(childPath(path, name)).error("Required value");
  }
  const properties = schema.properties ?? {};
  const additional = schema.additionalProperties;
  for (const [key, item] of Object.entries(value)) {
    const sub = properties[key] ?? (typeof additional === "object" ? additional : undefined);
    if (sub) validateValue(item, sub, childPath(path, key), out, structural);
    else if (structural && additional !== true && !schema["x-kubernetes-preserve-unknown-fields"]) {
      out.at(childPath(path, key)).error(`unknown field "${childPath(path, key)}"`);
    }
  }
}

function validateRules(value: unknown, schema: Schema, rules: ValidationRule[], path: string, out: Findings): void {
  const self = toCelValue(value, schema);
  const type = expectedTypes(schema);
  for (const rule of rules) {
    if (isTransitionRule(rule.rule)) continue;
    const result = compileRule(rule.rule)(self);
    if ("error" in result) {
      const described = (rule.message ?? rule.rule).trim();
      out.at(path).error(`Invalid value: "${type}": ${result.error} evaluating rule: ${described}`);
    } else if (result.value !== true) {
      out.at(path).error(`Invalid value: "${type}": ${ruleMessage(rule, self)}`);
    }
  }
}

/** The message of a failed rule: its messageExpression when that yields a one-line string, else its message. */
function ruleMessage(rule: ValidationRule, self: unknown): string {
  if (rule.messageExpression) {
    const result = compileRule(rule.messageExpression)(self);
    if (
      "value" in result &&
      typeof result.value === "string" &&
      result.value.trim() !== "" &&
      !result.value.includes("\n")
    ) {
      return result.value;
    }
  }
  return rule.message?.trim() || `failed rule: ${rule.rule.trim()}`;
}
