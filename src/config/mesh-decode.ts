// Decoding of mesh configuration YAML as Istio's jsonpb does it, against the field table in
// mesh-types.ts: JSON or proto field names, unknown fields and bad values reported with their path,
// Go durations, enums by name or number, empty lists as absent.
import { parse as parseYaml } from "yaml";
import { ENUM_VALUES, MESSAGE_FIELDS, ONEOF_GROUPS } from "./mesh-types.ts";
import { parseGoDuration } from "./validation/common/durations.ts";
import { goQuote } from "./validation/common/format.ts";
import { asObject, type JsonObject } from "./validation/common/json.ts";
import type { Findings } from "./validation/findings.ts";

/** Decodes YAML text as the proto message `message` (absent or empty text: an empty message). */
export function decodeYaml(text: string, message: string, out: Findings): JsonObject {
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (err) {
    out.error(`cannot parse YAML: ${(err as Error).message}`);
    return {};
  }
  if (parsed === null || parsed === undefined) return {};
  return decodeMessage(parsed, message, out) ?? {};
}

/** proto field names (snake_case) map to their JSON names; jsonpb accepts both. */
function jsonName(key: string): string {
  return key.replace(/_([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());
}

function decodeMessage(value: unknown, message: string, out: Findings): JsonObject | undefined {
  if (value === null) return undefined;
  const obj = asObject(value);
  if (!obj) {
    out.error(`expected an object for ${message}, found ${JSON.stringify(value)}`);
    return undefined;
  }
  const fields = MESSAGE_FIELDS[message];
  const decoded: JsonObject = {};
  for (const [key, fieldValue] of Object.entries(obj)) {
    const name = key in fields ? key : jsonName(key);
    const kind = fields[name];
    if (kind === undefined) {
      out.at(key).error(`unknown field "${key}" in istio.mesh.v1alpha1.${message}`);
      continue;
    }
    const result = decodeField(fieldValue, kind, out.at(name));
    if (result !== undefined) decoded[name] = result;
  }
  for (const group of ONEOF_GROUPS[message] ?? []) {
    const set = group.filter((field) => field in decoded);
    for (const extra of set.slice(1))
      out.at(extra).error(`only one of ${group.join(", ")} may be set; ${set[0]} is already set`);
  }
  return decoded;
}

function decodeField(value: unknown, kind: string, out: Findings): unknown {
  if (value === null || value === undefined) return undefined;
  if (kind.endsWith("[]")) {
    if (!Array.isArray(value)) {
      out.error(`expected a list, found ${JSON.stringify(value)}`);
      return undefined;
    }
    // An empty list decodes to an absent one.
    if (value.length === 0) return undefined;
    const element = kind.slice(0, -2);
    return value.map((item, i) => {
      if (item !== null) return decodeField(item, element, out.at("", i));
      out.at("", i).error("null is not allowed in a list");
      return undefined;
    });
  }
  if (kind.startsWith("map:")) {
    const obj = asObject(value);
    if (!obj) {
      out.error(`expected a map, found ${JSON.stringify(value)}`);
      return undefined;
    }
    const entryKind = kind.slice(4);
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, decodeField(v, entryKind, out.at(k))]));
  }
  if (kind.startsWith("msg:")) return decodeMessage(value, kind.slice(4), out);
  if (kind.startsWith("enum:")) return decodeEnum(value, kind.slice(5), out);
  return decodeScalar(value, kind, out);
}

function decodeEnum(value: unknown, name: string, out: Findings): string | undefined {
  const values = ENUM_VALUES[name];
  if (typeof value === "string" && value in values) return value;
  const byNumber = Object.entries(values).find(([, n]) => n === value);
  if (byNumber) return byNumber[0];
  out.error(`unknown value ${goQuote(JSON.stringify(value))} for enum istio.mesh.v1alpha1.${name}`);
  return undefined;
}

const INT_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

function decodeScalar(value: unknown, kind: string, out: Findings): unknown {
  switch (kind) {
    case "string":
      if (typeof value === "string") return value;
      break;
    case "bool":
      if (typeof value === "boolean") return value;
      break;
    case "double":
      if (typeof value === "number") return value;
      // jsonpb also reads numbers written as strings.
      if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
      break;
    case "duration": {
      if (typeof value !== "string") break;
      const parsed = parseGoDuration(value);
      if ("error" in parsed) {
        out.error(`bad Duration: ${parsed.error}`);
        return undefined;
      }
      return value;
    }
    case "struct":
    case "object":
      if (asObject(value)) return value;
      break;
    default: {
      // Integers: jsonpb accepts numbers and decimal strings.
      const n = typeof value === "string" && /^-?[0-9]+$/.test(value) ? Number(value) : value;
      const [min, max] = INT_RANGES[kind];
      if (typeof n === "number" && Number.isInteger(n) && n >= min && n <= max) return n;
      break;
    }
  }
  out.error(`invalid value for ${kind} field: ${JSON.stringify(value)}`);
  return undefined;
}
