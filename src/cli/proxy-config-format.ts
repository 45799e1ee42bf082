// JSON and YAML as istioctl prints protos: Istio's protomarshal (four-space indent; a Struct such as
// a node's metadata comes out one level deeper, as Go's jsonpb writes it) and sigs.k8s.io/yaml
// (keys sorted, sequences not indented, strings that would read as another type double-quoted,
// others needing quotes single-quoted).
import { type DescMessage, fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { Document, parseDocument, Scalar, visit } from "yaml";
import { registry, schemaForTypeUrl } from "../api/index.ts";

const INDENT = "    ";

/** Proto JSON as Istio's protomarshal.ToJSONWithIndent(msg, "    ") prints it. */
export function goJson(value: JsonValue): string {
  return writeJson(value, "");
}

function writeJson(value: JsonValue, indent: string): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const inner = indent + INDENT;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => inner + writeJson(v, inner)).join(",\n")}\n${indent}]`;
  }
  // An Any's "@type" comes first, as in Go.
  const entries = Object.entries(value).sort(([a], [b]) => Number(b === "@type") - Number(a === "@type"));
  if (entries.length === 0) return "{}";
  const fields = entries.map(([key, v]) => {
    const text = writeJson(v, inner);
    // jsonpb writes a Struct (a node's metadata) one level deeper than its place.
    const shown = isStruct(key, v) ? text.replaceAll("\n", `\n${INDENT}`) : text;
    return `${inner}${JSON.stringify(key)}: ${shown}`;
  });
  return `{\n${fields.join(",\n")}\n${indent}}`;
}

// A node's or build's metadata is a Struct; Envoy's core.Metadata (filterMetadata) is not.
function isStruct(key: string, value: JsonValue): boolean {
  return (
    key === "metadata" &&
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    !("filterMetadata" in value) &&
    !("typedFilterMetadata" in value)
  );
}

/** JSON as Go's json.MarshalIndent(v, "", "    ") writes it: HTML characters escaped. */
export function goMarshalIndent(value: JsonValue): string {
  return JSON.stringify(value, null, 4).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
}

/**
 * A config dump's JSON (either field spelling) as the proto3 JSON of `schema`, as istioctl prints
 * the protos it decoded; as it was when it holds types this build does not know.
 */
export function protoJson(schema: DescMessage, value: JsonValue): JsonValue {
  try {
    const json = toJson(schema, fromJson(schema, value, { registry, ignoreUnknownFields: true }), { registry });
    return sortMapKeys(schema, json);
  } catch {
    return value;
  }
}

/** YAML as sigs.k8s.io/yaml.JSONToYAML writes the JSON of a proto. */
export function goYaml(value: JsonValue): string {
  const doc = new Document(value, { sortMapEntries: true });
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value !== "string") return;
      // go-yaml double-quotes a string that YAML 1.1 would read as a number, bool or null.
      if (node.value !== "" && readsAsOtherType(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return doc.toString({ indentSeq: false, lineWidth: 0, singleQuote: true });
}

export function readsAsOtherType(text: string): boolean {
  const doc = parseDocument(text, { version: "1.1" });
  return doc.errors.length === 0 && doc.contents instanceof Scalar && typeof doc.contents.value !== "string";
}

// Go's protojson writes map entries (and a Struct's fields) sorted by key; protobuf-es keeps their order.
function sortMapKeys(schema: DescMessage, value: JsonValue): JsonValue {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  if (schema.typeName === "google.protobuf.Struct" || schema.typeName === "google.protobuf.Value")
    return sortDeep(value);
  if (schema.typeName === "google.protobuf.Any") {
    const inner = typeof value["@type"] === "string" ? schemaForTypeUrl(value["@type"]) : undefined;
    return inner && !inner.typeName.startsWith("google.protobuf.") ? sortMapKeys(inner, value) : value;
  }
  const out: Record<string, JsonValue> = {};
  for (const [key, v] of Object.entries(value)) {
    const field = schema.fields.find((f) => f.jsonName === key);
    if (field?.fieldKind === "map" && v !== null && typeof v === "object" && !Array.isArray(v)) {
      const entries = Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const message = field.mapKind === "message" ? field.message : undefined;
      out[key] = Object.fromEntries(entries.map(([k, e]) => [k, message ? sortMapKeys(message, e) : e]));
    } else if (field?.fieldKind === "message") {
      out[key] = sortMapKeys(field.message, v);
    } else if (field?.fieldKind === "list" && field.listKind === "message" && Array.isArray(v)) {
      out[key] = v.map((e) => sortMapKeys(field.message, e));
    } else {
      out[key] = v;
    }
  }
  return out;
}

function sortDeep(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortDeep);
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value).sort();
  return Object.fromEntries(keys.map((k) => [k, sortDeep(value[k])]));
}
