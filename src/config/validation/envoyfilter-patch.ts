// Decoding an EnvoyFilter patch value into the Envoy message its applyTo names, as istiod does
// before accepting it (validation-rules.md §11, §20): a value that does not decode is an error,
// one that decodes only when unknown fields are ignored gets a warning.
import {
  type DescEnum,
  type DescField,
  type DescMessage,
  fromJson,
  type JsonValue,
  type Message,
} from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import type { Any } from "@bufbuild/protobuf/wkt";
import { registry, unpackAny } from "../../api/index.ts";
import { checkMessage } from "../../api/pgv/index.ts";
import { parseGoDuration } from "./common/durations.ts";
import { goQuote } from "./common/format.ts";
import { asObject, type JsonObject } from "./common/json.ts";
import type { Findings } from "./findings.ts";

/** The Envoy message a patch value is decoded into, by applyTo (Istio's BuildXDSObjectFromStruct). */
export const PATCH_MESSAGE_TYPES: Readonly<Record<string, string>> = {
  CLUSTER: "envoy.config.cluster.v3.Cluster",
  LISTENER: "envoy.config.listener.v3.Listener",
  ROUTE_CONFIGURATION: "envoy.config.route.v3.RouteConfiguration",
  FILTER_CHAIN: "envoy.config.listener.v3.FilterChain",
  HTTP_FILTER: "envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter",
  NETWORK_FILTER: "envoy.config.listener.v3.Filter",
  VIRTUAL_HOST: "envoy.config.route.v3.VirtualHost",
  HTTP_ROUTE: "envoy.config.route.v3.Route",
  EXTENSION_CONFIG: "envoy.config.core.v3.TypedExtensionConfig",
  BOOTSTRAP: "envoy.config.bootstrap.v3.Bootstrap",
  LISTENER_FILTER: "envoy.config.listener.v3.ListenerFilter",
};

// Packages whose types istiod compiles in (all of go-control-plane, plus Istio's own extensions).
// Sluice generates only part of them, so a type from these packages that Sluice lacks is not
// checked rather than rejected; any other unknown type is rejected as istiod does.
const ISTIOD_KNOWN_PACKAGES = ["envoy.", "udpa.", "xds.", "istio.", "io.istio.", "google.", "stats."];
const PLACEHOLDER_TYPE = "type.googleapis.com/google.protobuf.Empty";

/** A problem in a patch value, at its field path inside the value ("" for the value itself). */
export interface PatchValueIssue {
  path: string;
  message: string;
}

/**
 * Decodes `value` as the message for `applyTo` strictly, as Sluice applies it: unknown fields (each at
 * its path), values that do not decode and Any types Sluice lacks are issues. Istio only warns about
 * unknown fields and drops them; Sluice refuses them, since a misspelt field silently does nothing.
 */
export function decodePatchValue(
  applyTo: string,
  value: JsonObject,
): { message: Message; issues?: undefined } | { issues: PatchValueIssue[]; message?: undefined } {
  const schema = registry.getMessage(PATCH_MESSAGE_TYPES[applyTo] ?? "");
  if (!schema) return { issues: [{ path: "", message: `Envoy filter: applyTo ${applyTo} has no Envoy message` }] };
  const prepared = new PreparedJson();
  const decodable = asObject(prepared.message(schema, value, "")) ?? value;
  const issues: PatchValueIssue[] = [
    ...prepared.unresolved.map(({ path, url }) => ({
      path,
      message: `Envoy filter: could not resolve Any message type: ${url}`,
    })),
    ...prepared.errors.map((message) => ({ path: "", message: `Envoy filter: ${message}` })),
    ...prepared.unknownFields.map(({ path, typeName }) => ({
      path,
      message: `Envoy filter: unknown field ${goQuote(path.slice(path.lastIndexOf(".") + 1))} in ${typeName}`,
    })),
  ];
  if (issues.length > 0) return { issues };
  const message = decode(schema, decodable, false);
  return typeof message === "string" ? { issues: [{ path: "", message: `Envoy filter: ${message}` }] } : { message };
}

// Operations whose value is a whole resource (or filter, route, ...) put into the config as it is.
const WHOLE_VALUE_OPERATIONS = new Set(["ADD", "INSERT_BEFORE", "INSERT_AFTER", "INSERT_FIRST", "REPLACE"]);
const MERGE_OPERATIONS = new Set(["MERGE", "MERGE_AND_REPLACE_LIST"]);
// Rules about what is missing: the config merged into may have it.
const PRESENCE_RULES = new Set(["message.required", "oneof.required", "repeated.min_items", "map.min_pairs"]);

/**
 * How a merge applies the field at a PGV path of the patch value: "whole" inside a list item or map
 * value (merged in as they are), "set" for a field the patch sets, "unset" otherwise.
 */
function mergedAs(root: ReflectMessage, path: string): "whole" | "set" | "unset" {
  const tokens = path.match(/[^.[\]]+|\[[^\]]*\]/g) ?? [];
  let message: ReflectMessage = root;
  for (let i = 0; i < tokens.length; i++) {
    if (message.desc.typeName === "google.protobuf.Any") {
      const inner = unpackAny(message.message as Any);
      const schema = inner && registry.getMessage(inner.$typeName);
      if (!inner || !schema) return "unset";
      message = reflect(schema, inner);
    }
    const field = message.desc.fields.find((f) => f.name === tokens[i]);
    if (!field || !message.isSet(field)) return "unset";
    // A rule on the list itself (min_items) may be met by the items merged into.
    if (field.fieldKind === "list" || field.fieldKind === "map") return i === tokens.length - 1 ? "set" : "whole";
    if (field.fieldKind !== "message" || i === tokens.length - 1) return "set";
    message = message.get(field);
  }
  return "set";
}

/**
 * What Envoy would reject in a patch value, at its proto field path inside the value: every PGV
 * violation of a value that goes into the config whole (ADD, INSERT_*, REPLACE); for a merge, those
 * the merge cannot fix: on fields the value sets, or inside list items and map values (merged in
 * whole), but not the absence of fields the config merged into may have.
 */
export function patchValueViolations(applyTo: string, operation: string, message: Message): PatchValueIssue[] {
  const schema = registry.getMessage(PATCH_MESSAGE_TYPES[applyTo] ?? "");
  if (!schema) return [];
  const merge = MERGE_OPERATIONS.has(operation);
  if (!merge && !WHOLE_VALUE_OPERATIONS.has(operation)) return [];
  const root = reflect(schema, message);
  return checkMessage(schema, message)
    .filter((v) => {
      if (!merge) return true;
      const applied = mergedAs(root, v.path);
      return applied === "whole" || (applied === "set" && !PRESENCE_RULES.has(v.rule));
    })
    .map((v) => ({
      path: v.path,
      message: `Envoy filter: Envoy would reject this ${schema.typeName}: ${v.message} (${v.rule})`,
    }));
}

/**
 * Decodes `value` as the message for `applyTo` and reports what istiod would, except that unknown
 * fields are errors at their path (see decodePatchValue) and a value Envoy would reject is an error
 * (patchValueViolations). `out` is positioned at the patch value.
 */
export function validatePatchValue(applyTo: string, operation: string, value: JsonObject, out: Findings): void {
  const schema = registry.getMessage(PATCH_MESSAGE_TYPES[applyTo] ?? "");
  if (!schema) return;
  const errorsBefore = out.errors.length;
  const prepared = new PreparedJson();
  const decodable = asObject(prepared.message(schema, value, "")) ?? value;
  for (const { url } of prepared.unresolved) {
    if (url.includes(".v2.")) {
      out.error(
        `referenced type unknown (hint: try using the v3 XDS API): Envoy filter: could not resolve Any message type: ${url}`,
      );
    } else if (!ISTIOD_KNOWN_PACKAGES.some((p) => typeName(url).startsWith(p))) {
      out.error(`referenced type unknown: Envoy filter: could not resolve Any message type: ${url}`);
    } else {
      out.warn(`Envoy filter: type ${url} is not known to Sluice; its value is not checked`);
    }
  }
  for (const problem of prepared.errors) out.error(`Envoy filter: ${problem}`);
  for (const { path, typeName } of prepared.unknownFields) {
    out.at(path).error(`Envoy filter: unknown field ${goQuote(path.slice(path.lastIndexOf(".") + 1))} in ${typeName}`);
  }
  if (out.errors.length > errorsBefore) return;
  const message = decode(schema, decodable, true);
  if (typeof message === "string") {
    out.error(`Envoy filter: ${message}`);
    return;
  }
  const missing = filtersWithoutTypedConfig(reflect(schema, message));
  if (missing.length > 0) {
    out.warn(`using deprecated types by name without typed_config; ${missing.join(", ")}`);
  }
  for (const issue of patchValueViolations(applyTo, operation, message)) out.at(issue.path).error(issue.message);
}

function typeName(url: string): string {
  return url.slice(url.lastIndexOf("/") + 1);
}

/** The message, or the decoder's error text. */
function decode(schema: DescMessage, json: JsonObject, ignoreUnknownFields: boolean): Message | string {
  try {
    return fromJson(schema, json as JsonValue, { registry, ignoreUnknownFields });
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * Brings a patch value to what protobuf-es decodes the way istiod's decoder (golang/protobuf jsonpb)
 * reads it, walking the JSON along the message schema: Durations may be written as Go durations
 * (`500ms`), and are rewritten to proto JSON; an unknown enum name is an error even where unknown
 * fields are not; an Any whose type Sluice lacks becomes an empty placeholder so that the rest
 * still decodes. Keys the schema does not know are kept for the strict decode to report.
 */
class PreparedJson {
  readonly unresolved: { path: string; url: string }[] = [];
  readonly errors: string[] = [];
  /** Keys the schema does not know, at their path in the value (`filterChains[0].bogus`). */
  readonly unknownFields: { path: string; typeName: string }[] = [];

  message(schema: DescMessage, value: unknown, path: string): unknown {
    const obj = asObject(value);
    if (!obj) return value;
    if (schema.typeName === "google.protobuf.Any") return this.any(obj, path);
    if (FREE_FORM_TYPES.has(schema.typeName)) return value;
    const result: JsonObject = {};
    for (const [key, v] of Object.entries(obj)) {
      const field = schema.fields.find((f) => f.jsonName === key || f.name === key);
      const at = path === "" ? key : `${path}.${key}`;
      if (!field) this.unknownFields.push({ path: at, typeName: schema.typeName });
      result[key] = field ? this.field(field, v, at) : v;
    }
    return result;
  }

  private any(obj: JsonObject, path: string): unknown {
    const url = obj["@type"];
    if (typeof url !== "string") return obj;
    const schema = registry.getMessage(typeName(url));
    if (!schema) {
      this.unresolved.push({ path, url });
      return { "@type": PLACEHOLDER_TYPE };
    }
    if (schema.typeName === DURATION) return { ...obj, value: this.duration(obj.value) };
    // Other well-known types keep their JSON under "value"; messages spread their fields.
    if (schema.typeName.startsWith("google.protobuf.")) return obj;
    const { "@type": _type, ...fields } = obj;
    return { "@type": url, ...asObject(this.message(schema, fields, path)) };
  }

  private field(field: DescField, value: unknown, path: string): unknown {
    if (value === null) return value;
    switch (field.fieldKind) {
      case "message":
        return this.messageValue(field.message, value, path);
      case "enum":
        return this.enumValue(field.enum, value);
      case "list":
        if (!Array.isArray(value)) return value;
        if (field.listKind === "message") {
          return value.map((v, i) => this.messageValue(field.message, v, `${path}[${i}]`));
        }
        if (field.listKind === "enum") return value.map((v) => this.enumValue(field.enum, v));
        return value;
      case "map": {
        const map = asObject(value);
        if (!map || field.mapKind === "scalar") return value;
        const entries = Object.entries(map);
        return Object.fromEntries(
          field.mapKind === "message"
            ? entries.map(([k, v]) => [k, this.messageValue(field.message, v, `${path}.${k}`)])
            : entries.map(([k, v]) => [k, this.enumValue(field.enum, v)]),
        );
      }
      default:
        return value;
    }
  }

  private messageValue(schema: DescMessage, value: unknown, path: string): unknown {
    return schema.typeName === DURATION ? this.duration(value) : this.message(schema, value, path);
  }

  private enumValue(schema: DescEnum, value: unknown): unknown {
    if (typeof value === "string" && !schema.values.some((v) => v.name === value)) {
      this.errors.push(`unknown value ${goQuote(JSON.stringify(value))} for enum ${schema.typeName}`);
    }
    return value;
  }

  private duration(value: unknown): unknown {
    if (typeof value !== "string") return value;
    const parsed = parseGoDuration(value);
    if ("error" in parsed) {
      this.errors.push(`bad Duration: ${parsed.error}`);
      return value;
    }
    return protoJsonDuration(parsed.nanos);
  }
}

const DURATION = "google.protobuf.Duration";
// Messages whose JSON is free-form: nothing inside them follows an Envoy schema.
const FREE_FORM_TYPES = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);
const NANOS_PER_SECOND = 1_000_000_000n;

/** A Duration in proto JSON form: seconds with up to nine fractional digits (`-1.500000000s`). */
function protoJsonDuration(nanos: bigint): string {
  const sign = nanos < 0n ? "-" : "";
  const abs = nanos < 0n ? -nanos : nanos;
  const fraction = abs % NANOS_PER_SECOND;
  const seconds = `${sign}${abs / NANOS_PER_SECOND}`;
  return fraction === 0n ? `${seconds}s` : `${seconds}.${fraction.toString().padStart(9, "0")}s`;
}

/**
 * Names of messages that have a `typed_config` field but set neither it nor `config_discovery`:
 * Envoy's deprecated lookup of extensions by name. Like istiod, only singular message fields are
 * followed (not lists, maps, or the contents of an Any).
 */
function filtersWithoutTypedConfig(message: ReflectMessage): string[] {
  const found: string[] = [];
  let name = "";
  let requiresTypedConfig = false;
  let hasTypedConfig = false;
  for (const f of message.fields) {
    const set = message.isSet(f);
    if (f.jsonName === "name" && f.fieldKind === "scalar") name = String(message.get(f));
    if (f.jsonName === "typedConfig") requiresTypedConfig = true;
    if ((f.jsonName === "typedConfig" || f.jsonName === "configDiscovery") && set) hasTypedConfig = true;
    if (set && f.fieldKind === "message") found.push(...filtersWithoutTypedConfig(message.get(f)));
  }
  if (requiresTypedConfig && !hasTypedConfig) found.push(name);
  return found;
}
