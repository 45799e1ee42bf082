// JSON and YAML as istioctl prints protos: Istio's protomarshal (four-space indent; a Struct such as
// a node's metadata comes out one level deeper, as Go's jsonpb writes it) and sigs.k8s.io/yaml
// (keys sorted, sequences not indented, strings that would read as another type double-quoted,
// others needing quotes single-quoted).
import type { JsonValue } from "@bufbuild/protobuf";
import { Document, parseDocument, Scalar, visit } from "yaml";

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
    const shown = key === "metadata" && isObject(v) ? text.replaceAll("\n", `\n${INDENT}`) : text;
    return `${inner}${JSON.stringify(key)}: ${shown}`;
  });
  return `{\n${fields.join(",\n")}\n${indent}}`;
}

function isObject(value: JsonValue): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value);
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

function readsAsOtherType(text: string): boolean {
  const doc = parseDocument(text, { version: "1.1" });
  return doc.errors.length === 0 && doc.contents instanceof Scalar && typeof doc.contents.value !== "string";
}
