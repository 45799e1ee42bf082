// Istio's EnvoyFilter webhook validation (validation-rules.md §11): the workload selector, then each
// config patch: applyTo, patch, operation, value, proxy version, the match object's kind for the
// applyTo, filter/sub-filter matches, and finally the patch value decoded as an Envoy message.
import {
  asObject,
  emptySelectorWarning,
  field,
  has,
  type JsonObject,
  listField,
  objectField,
  re2SyntaxError,
  readEnum,
  stringField,
  validateLabelsSelector,
} from "./common/index.ts";
import { validatePatchValue } from "./envoyfilter-patch.ts";
import type { Findings, SemanticValidator } from "./findings.ts";

const APPLY_TO = [
  "INVALID",
  "LISTENER",
  "FILTER_CHAIN",
  "NETWORK_FILTER",
  "HTTP_FILTER",
  "ROUTE_CONFIGURATION",
  "VIRTUAL_HOST",
  "HTTP_ROUTE",
  "CLUSTER",
  "EXTENSION_CONFIG",
  "BOOTSTRAP",
  "LISTENER_FILTER",
] as const;
const CONTEXT = ["ANY", "SIDECAR_INBOUND", "SIDECAR_OUTBOUND", "GATEWAY", "WAYPOINT"] as const;
const OPERATION = [
  "INVALID",
  "MERGE",
  "ADD",
  "REMOVE",
  "INSERT_BEFORE",
  "INSERT_AFTER",
  "INSERT_FIRST",
  "REPLACE",
  "MERGE_AND_REPLACE_LIST",
] as const;
const FILTER_CLASS = ["UNSPECIFIED", "AUTHN", "AUTHZ", "STATS"] as const;
const ROUTE_ACTION = ["ANY", "ROUTE", "REDIRECT", "DIRECT_RESPONSE"] as const;
const ENUM_PREFIX = "istio.networking.v1alpha3.EnvoyFilter";

const LISTENER_CLASS = new Set(["LISTENER", "FILTER_CHAIN", "NETWORK_FILTER", "HTTP_FILTER"]);
const ROUTE_CLASS = new Set(["ROUTE_CONFIGURATION", "VIRTUAL_HOST", "HTTP_ROUTE"]);
const HCM_NAMES = new Set(["envoy.filters.network.http_connection_manager", "envoy.http_connection_manager"]);
const MAX_PROXY_VERSION_LENGTH = 1024;

// Filter names Envoy renamed (Istio's pkg/config/xds/deprecated.go): old name → current name.
const DEPRECATED_FILTER_NAMES: ReadonlyMap<string, string> = new Map([
  ["envoy.buffer", "envoy.filters.http.buffer"],
  ["envoy.cors", "envoy.filters.http.cors"],
  ["envoy.csrf", "envoy.filters.http.csrf"],
  ["envoy.http_dynamo_filter", "envoy.filters.http.dynamo"],
  ["envoy.fault", "envoy.filters.http.fault"],
  ["envoy.grpc_http1_bridge", "envoy.filters.http.grpc_http1_bridge"],
  ["envoy.grpc_json_transcoder", "envoy.filters.http.grpc_json_transcoder"],
  ["envoy.grpc_web", "envoy.filters.http.grpc_web"],
  ["envoy.gzip", "envoy.filters.http.gzip"],
  ["envoy.health_check", "envoy.filters.http.health_check"],
  ["envoy.ip_tagging", "envoy.filters.http.ip_tagging"],
  ["envoy.lua", "envoy.filters.http.lua"],
  ["envoy.rate_limit", "envoy.filters.http.ratelimit"],
  ["envoy.router", "envoy.filters.http.router"],
  ["envoy.squash", "envoy.filters.http.squash"],
  ["envoy.listener.http_inspector", "envoy.filters.listener.http_inspector"],
  ["envoy.listener.original_dst", "envoy.filters.listener.original_dst"],
  ["envoy.listener.original_src", "envoy.filters.listener.original_src"],
  ["envoy.listener.proxy_protocol", "envoy.filters.listener.proxy_protocol"],
  ["envoy.listener.tls_inspector", "envoy.filters.listener.tls_inspector"],
  ["envoy.client_ssl_auth", "envoy.filters.network.client_ssl_auth"],
  ["envoy.http_connection_manager", "envoy.filters.network.http_connection_manager"],
  ["envoy.mongo_proxy", "envoy.filters.network.mongo_proxy"],
  ["envoy.ratelimit", "envoy.filters.network.ratelimit"],
  ["envoy.redis_proxy", "envoy.filters.network.redis_proxy"],
  ["envoy.tcp_proxy", "envoy.filters.network.tcp_proxy"],
]);
// `envoy.ext_authz` named both the network and the HTTP filter; Istio picks one at random, Sluice
// picks by position: a filter match is a network filter, a sub-filter match an HTTP filter.
const EXT_AUTHZ = "envoy.ext_authz";

export const validateEnvoyFilter: SemanticValidator = (obj, _ctx, out) => {
  const spec = asObject(obj.spec) ?? {};
  const selector = validateLabelsSelector(field(spec, "workloadSelector"), out.at("workloadSelector"));
  if (!selector.ok) return;
  out.warn(
    "EnvoyFilter exposes internal implementation details that may change at any time. Prefer other APIs if possible, and exercise extreme caution, especially around upgrades.",
  );
  if (selector.empty) out.at("workloadSelector").warn(emptySelectorWarning("Envoy filter"));
  (listField(spec, "configPatches") ?? []).forEach((value, i) => {
    const at = out.at("configPatches", i);
    const patch = asObject(value);
    if (patch) validateConfigPatch(patch, at);
    else at.error("Envoy filter: null config patch");
  });
};

/** An enum field read as its name (absent: the first name); an undecodable value is reported. */
function enumName(
  obj: JsonObject,
  name: string,
  names: readonly string[],
  enumType: string,
  out: Findings,
): string | undefined {
  return readEnum(field(obj, name), { fullName: `${ENUM_PREFIX}.${enumType}`, values: names }, out.at(name));
}

function validateConfigPatch(cp: JsonObject, out: Findings): void {
  const match = objectField(cp, "match");
  const errorsBefore = out.errors.length;
  const context = match ? enumName(match, "context", CONTEXT, "PatchContext", out.at("match")) : undefined;
  const applyTo = enumName(cp, "applyTo", APPLY_TO, "ApplyTo", out) ?? "INVALID";
  const patch = objectField(cp, "patch");
  const operation = patch
    ? (enumName(patch, "operation", OPERATION, "Patch.Operation", out.at("patch")) ?? "INVALID")
    : "INVALID";
  if (patch) enumName(patch, "filterClass", FILTER_CLASS, "Patch.FilterClass", out.at("patch"));
  const vhostRoute = objectField(
    objectField(objectField(match ?? {}, "routeConfiguration") ?? {}, "vhost") ?? {},
    "route",
  );
  if (vhostRoute) {
    enumName(
      vhostRoute,
      "action",
      ROUTE_ACTION,
      "RouteConfigurationMatch.RouteMatch.Action",
      out.at("match.routeConfiguration.vhost.route"),
    );
  }
  // A value that fails to decode fails the whole object before validation runs.
  if (out.errors.length > errorsBefore) return;

  // Istio does not validate waypoint patches yet.
  if (context === "WAYPOINT") return;
  if (applyTo === "INVALID") {
    out.at("applyTo").error("Envoy filter: missing applyTo");
    return;
  }
  if (!patch) {
    out.at("patch").error("Envoy filter: missing patch");
    return;
  }
  if (operation === "INVALID") {
    out.at("patch.operation").error("Envoy filter: missing patch operation");
    return;
  }
  const patchValue = field(patch, "value");
  if (operation !== "REMOVE" && patchValue === undefined) {
    out.at("patch.value").error("Envoy filter: missing patch value for non-remove operation");
    return;
  }
  if (match && !validateProxyVersion(match, out.at("match.proxy.proxyVersion"))) return;
  if (match && !validateMatchKind(applyTo, match, out.at("match"))) return;
  if (patchValue === undefined) return;
  const value = asObject(patchValue);
  if (!value) {
    out.at("patch.value").error("Envoy filter: patch value must be an object (google.protobuf.Struct)");
    return;
  }
  if (!APPLY_TO.includes(applyTo as (typeof APPLY_TO)[number])) {
    out.at("applyTo").error(`Envoy filter: unknown object type for applyTo ${applyTo}`);
    return;
  }
  validatePatchValue(applyTo, operation, value, out.at("patch.value"));
}

/** The proxy version match must be an RE2 regex; an overlong one is ignored by istiod. False stops the patch. */
function validateProxyVersion(match: JsonObject, out: Findings): boolean {
  const proxyVersion = stringField(objectField(match, "proxy") ?? {}, "proxyVersion");
  if (proxyVersion === "") return true;
  if (Buffer.byteLength(proxyVersion, "utf8") > MAX_PROXY_VERSION_LENGTH) {
    out.warn(`Envoy filter: proxyVersion match exceeds ${MAX_PROXY_VERSION_LENGTH} characters and will be ignored`);
    return true;
  }
  const error = re2SyntaxError(proxyVersion);
  if (!error) return true;
  out.error(`Envoy filter: invalid regex for proxy version, [${error}]`);
  return false;
}

/** The match object must suit the applyTo's class. False stops the patch (listener class only, as Istio). */
function validateMatchKind(applyTo: string, match: JsonObject, out: Findings): boolean {
  const objectTypes = ["listener", "routeConfiguration", "cluster", "waypoint"].filter((k) => has(match, k));
  if (objectTypes.length === 0) return true;
  if (LISTENER_CLASS.has(applyTo)) {
    const listener = objectField(match, "listener");
    if (!listener) {
      out.error("Envoy filter: applyTo for listener class objects cannot have non listener match");
      return false;
    }
    const filter = objectField(objectField(listener, "filterChain") ?? {}, "filter");
    return filter ? validateFilterMatch(applyTo, filter, out.at("listener.filterChain.filter")) : true;
  }
  if (ROUTE_CLASS.has(applyTo) && !has(match, "routeConfiguration")) {
    out.error("Envoy filter: applyTo for http route class objects cannot have non route configuration match");
  }
  if (applyTo === "CLUSTER" && !has(match, "cluster")) {
    out.error("Envoy filter: applyTo for cluster class objects cannot have non cluster match");
  }
  return true;
}

function validateFilterMatch(applyTo: string, filter: JsonObject, out: Findings): boolean {
  if (applyTo === "LISTENER" || applyTo === "FILTER_CHAIN") {
    // An error in spirit, a warning for backwards compatibility (as Istio).
    out.warn(`Envoy filter: filter match has no effect when used with ${applyTo}`);
  }
  const name = stringField(filter, "name");
  if (name === "") {
    out.at("name").error("Envoy filter: filter match has no name to match on");
    return false;
  }
  const subFilter = objectField(filter, "subFilter");
  const subName = subFilter ? stringField(subFilter, "name") : "";
  if (subFilter) {
    if (applyTo !== "HTTP_FILTER") {
      out.at("subFilter").error("Envoy filter: subfilter match can be used with applyTo HTTP_FILTER only");
      return false;
    }
    if (!HCM_NAMES.has(name)) {
      out
        .at("name")
        .error(
          "Envoy filter: subfilter match requires filter match with envoy.filters.network.http_connection_manager",
        );
      return false;
    }
    if (subName === "") {
      out.at("subFilter.name").error("Envoy filter: subfilter match has no name to match on");
      return false;
    }
  }
  warnDeprecatedFilterName(name, "envoy.filters.network.ext_authz", out.at("name"));
  warnDeprecatedFilterName(subName, "envoy.filters.http.ext_authz", out.at("subFilter.name"));
  return true;
}

function warnDeprecatedFilterName(name: string, extAuthz: string, out: Findings): void {
  const current = name === EXT_AUTHZ ? extAuthz : DEPRECATED_FILTER_NAMES.get(name);
  if (current) out.warn(`using deprecated filter name "${name}"; use "${current}" instead`);
}
