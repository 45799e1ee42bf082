// Decoding an EnvoyFilter patch value into the Envoy message its applyTo names, as istiod does
// before accepting it (validation-rules.md §11, §20): a value that does not decode is an error,
// one that decodes only when unknown fields are ignored gets a warning.
import { type DescMessage, fromJson, type Message } from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import { registry } from "../../api/index.ts";
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

/**
 * Decodes `value` as the message for `applyTo` and reports what istiod would. `out` is positioned
 * at the patch value.
 */
export function validatePatchValue(applyTo: string, value: JsonObject, out: Findings): void {
  const schema = registry.getMessage(PATCH_MESSAGE_TYPES[applyTo] ?? "");
  if (!schema) return;
  const unresolved: string[] = [];
  const decodable = replaceUnresolvedAnys(value, unresolved);
  for (const url of unresolved) {
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
  if (!out.ok) return;
  const message = decode(schema, decodable, true);
  if (typeof message === "string") {
    out.error(`Envoy filter: ${message}`);
    return;
  }
  const strict = decode(schema, decodable, false);
  if (typeof strict === "string") out.warn(`Envoy filter: ${strict}`);
  const missing = filtersWithoutTypedConfig(reflect(schema, message));
  if (missing.length > 0) {
    out.warn(`using deprecated types by name without typed_config; ${missing.join(", ")}`);
  }
}

function typeName(url: string): string {
  return url.slice(url.lastIndexOf("/") + 1);
}

/** The message, or the decoder's error text. */
function decode(schema: DescMessage, json: JsonObject, ignoreUnknownFields: boolean): Message | string {
  try {
    return fromJson(schema, json as Parameters<typeof fromJson>[1], { registry, ignoreUnknownFields });
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * A copy of `value` in which every Any (`{"@type": ...}`) whose type Sluice cannot resolve is
 * replaced by an empty placeholder, so the rest can still be decoded; their URLs go to `unresolved`.
 */
function replaceUnresolvedAnys(value: JsonObject, unresolved: string[]): JsonObject {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    const obj = asObject(node);
    if (!obj) return node;
    const url = obj["@type"];
    if (typeof url === "string" && !registry.getMessage(typeName(url))) {
      unresolved.push(url);
      return { "@type": PLACEHOLDER_TYPE };
    }
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, walk(v)]));
  };
  return walk(value) as JsonObject;
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
