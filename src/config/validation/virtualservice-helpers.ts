// Reading VirtualService and EnvoyFilter fields by name the way Istio's jsonpb decoder does: a field
// may be spelled camelCase or proto snake_case; `null`, `[]` and absent all read as absent (§1.1.4).
import { goQuote } from "./common/format.ts";
import { asList, asObject, asString, asStringList, type JsonObject } from "./common/json.ts";
import type { Findings } from "./findings.ts";

function snakeCase(camel: string): string {
  return camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A field by its JSON (camelCase) name or its proto (snake_case) name; `null` reads as absent. */
export function field(obj: JsonObject, name: string): unknown {
  const value = obj[name] ?? obj[snakeCase(name)];
  return value === null ? undefined : value;
}

export function has(obj: JsonObject, name: string): boolean {
  return field(obj, name) !== undefined;
}

export function objectField(obj: JsonObject, name: string): JsonObject | undefined {
  return asObject(field(obj, name));
}

/** A repeated field; absent or empty gives undefined. */
export function listField(obj: JsonObject, name: string): unknown[] | undefined {
  return asList(field(obj, name));
}

export function stringField(obj: JsonObject, name: string): string {
  return asString(field(obj, name));
}

export function stringListField(obj: JsonObject, name: string): string[] {
  return asStringList(field(obj, name));
}

/** A numeric field; jsonpb also accepts integers written as strings. Absent reads as 0. */
export function numberField(obj: JsonObject, name: string): number {
  return toNumber(field(obj, name));
}

function toNumber(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  return 0;
}

/** The value of a wrapper or Percent message (`{value: n}`); jsonpb also takes a bare number for wrappers. */
export function wrappedNumber(value: unknown): number {
  const obj = asObject(value);
  return obj ? numberField(obj, "value") : toNumber(value);
}

/** A map field's entries; a present-but-empty map gives an empty list. */
export function mapEntries(obj: JsonObject, name: string): [string, unknown][] {
  const map = asObject(field(obj, name));
  return map ? Object.entries(map) : [];
}

/**
 * Decoding of an enum field: jsonpb takes the value's name or its number; anything else fails with
 * Istio's decoder message. Returns the name (or number) when it decoded.
 */
export function readEnum(
  value: unknown,
  names: readonly string[],
  enumName: string,
  out: Findings,
): string | number | undefined {
  if (value === undefined || value === null) return undefined;
  if ((typeof value === "string" && names.includes(value)) || Number.isInteger(value)) return value as string | number;
  out.error(`unknown value ${goQuote(JSON.stringify(value))} for enum ${enumName}`);
  return undefined;
}
