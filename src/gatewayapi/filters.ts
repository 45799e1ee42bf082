// HTTPRoute/GRPCRoute filters → Istio HTTPRoute fields: header modifiers, mirror, rewrite, redirect, CORS.
import type { gatewayapi } from "../config/index.ts";
import { type BackendContext, buildDestination, type Destination } from "./backends.ts";
import { formatDuration } from "./duration.ts";
import type { ConfigError } from "./model.ts";

export const REASON_INVALID_FILTER = "InvalidFilter";

export interface HeaderOperations {
  add?: Record<string, string>;
  remove?: string[];
  set?: Record<string, string>;
}

type HeaderModifier = gatewayapi.RulesFiltersRequestHeaderModifier;

function validHeaderValue(value: string): boolean {
  for (const byte of Buffer.from(value, "utf8")) {
    if (byte === 0x09 || (byte >= 0x20 && byte !== 0x7f)) continue;
    return false;
  }
  return true;
}

// "Subsequent entries with an equivalent header name MUST be ignored."
function headerMap(
  headers: readonly { name: string; value: string }[] | undefined,
): Record<string, string> | undefined {
  if (!headers || headers.length === 0) return undefined;
  const map: Record<string, string> = {};
  for (const h of headers) {
    const name = h.name.toLowerCase();
    if (!Object.hasOwn(map, name)) map[name] = h.value;
  }
  return map;
}

function headerOperations(filter: HeaderModifier | undefined): { ops?: HeaderOperations; error?: ConfigError } {
  if (!filter) return {};
  for (const h of [...(filter.set ?? []), ...(filter.add ?? [])]) {
    if (!validHeaderValue(h.value)) {
      return {
        error: { reason: REASON_INVALID_FILTER, message: `header "${h.name}" value contains invalid characters` },
      };
    }
  }
  const ops: HeaderOperations = {};
  const add = headerMap(filter.add);
  const set = headerMap(filter.set);
  if (add) ops.add = add;
  if (filter.remove && filter.remove.length > 0) ops.remove = [...filter.remove];
  if (set) ops.set = set;
  return { ops };
}

export interface HeaderFilter {
  type: string;
  requestHeaderModifier?: HeaderModifier;
  responseHeaderModifier?: HeaderModifier;
}

export function isHeaderFilter(filter: HeaderFilter): boolean {
  return filter.type === "RequestHeaderModifier" || filter.type === "ResponseHeaderModifier";
}

/** Applies a Request/ResponseHeaderModifier filter to a route or destination; an error fails the rule. */
export function applyHeaderFilter(
  target: { headers?: { request?: HeaderOperations; response?: HeaderOperations } },
  filter: HeaderFilter,
): ConfigError | undefined {
  const request = filter.type === "RequestHeaderModifier";
  const { ops, error } = headerOperations(request ? filter.requestHeaderModifier : filter.responseHeaderModifier);
  if (error || !ops) return error;
  target.headers ??= {};
  if (request) target.headers.request = ops;
  else target.headers.response = ops;
  return undefined;
}

export interface MirrorPolicy {
  destination: Destination;
  percentage?: { value: number };
}

export function mirrorPolicy(
  ctx: BackendContext,
  filter: gatewayapi.RulesFiltersRequestMirror,
  namespace: string,
  fromKind: string,
  enforceGrant: boolean,
): { mirror?: MirrorPolicy; error?: ConfigError } {
  const built = buildDestination(ctx, { ...filter.backendRef, weight: 1 }, namespace, fromKind, enforceGrant);
  if (built.error) return { error: built.error };
  const mirror: MirrorPolicy = { destination: built.destination ?? {} };
  if (filter.fraction) {
    mirror.percentage = { value: (100 * filter.fraction.numerator) / (filter.fraction.denominator ?? 100) };
  } else if (filter.percent !== undefined) {
    mirror.percentage = { value: filter.percent };
  }
  return { mirror };
}

export interface Rewrite {
  uri?: string;
  uriRegexRewrite?: { match: string; rewrite: string };
  authority?: string;
}

export function rewrite(filter: gatewayapi.HTTPRouteRulesFiltersUrlRewrite | undefined): Rewrite | undefined {
  if (!filter) return undefined;
  const out: Rewrite = {};
  if (filter.path?.type === "ReplacePrefixMatch") {
    // A trailing "/" is dropped; an empty prefix removes the matched prefix.
    out.uri = (filter.path.replacePrefixMatch ?? "").replace(/\/$/, "") || "/";
  } else if (filter.path?.type === "ReplaceFullPath") {
    out.uriRegexRewrite = { match: "/.*", rewrite: filter.path.replaceFullPath ?? "" };
  }
  if (filter.hostname) out.authority = filter.hostname;
  return out.uri || out.uriRegexRewrite || out.authority ? out : undefined;
}

export interface Redirect {
  redirectCode?: number;
  authority?: string;
  scheme?: string;
  port?: number;
  derivePort?: "FROM_PROTOCOL_DEFAULT" | "FROM_REQUEST_PORT";
  uri?: string;
  prefixRewrite?: string;
}

export function redirect(filter: gatewayapi.HTTPRouteRulesFiltersRequestRedirect | undefined): Redirect | undefined {
  if (!filter) return undefined;
  const out: Redirect = {};
  if (filter.statusCode !== undefined) out.redirectCode = filter.statusCode;
  if (filter.hostname !== undefined) out.authority = filter.hostname;
  if (filter.scheme !== undefined) out.scheme = filter.scheme;
  // "When empty, port (if specified) of the request is used" (unlike Istio's default).
  if (filter.port !== undefined) out.port = filter.port;
  else out.derivePort = filter.scheme !== undefined ? "FROM_PROTOCOL_DEFAULT" : "FROM_REQUEST_PORT";
  if (filter.path?.type === "ReplaceFullPath") out.uri = filter.path.replaceFullPath ?? "";
  if (filter.path?.type === "ReplacePrefixMatch") out.prefixRewrite = filter.path.replacePrefixMatch ?? "";
  return out;
}

type StringMatch = { exact: string } | { prefix: string } | { regex: string };

export interface CorsPolicy {
  allowOrigins?: StringMatch[];
  allowMethods?: string[];
  allowHeaders?: string[];
  exposeHeaders?: string[];
  maxAge?: string;
  allowCredentials?: boolean;
  unmatchedPreflights: "IGNORE";
}

// A valid origin: scheme://host[:port].
const ANY_ORIGIN = "^[a-zA-Z][a-zA-Z0-9+.-]*://[^/\\s?#]+$";

function originMatch(origin: string): StringMatch {
  if (origin === "*") return { regex: ANY_ORIGIN };
  if (!origin.includes("*")) return { exact: origin };
  if (origin.indexOf("*") === origin.length - 1) return { prefix: origin.slice(0, -1) };
  const quoted = origin.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&");
  return { regex: `^${quoted.replaceAll("\\*", ".*")}$` };
}

export function corsPolicy(filter: gatewayapi.HTTPRouteRulesFiltersCors | undefined): CorsPolicy | undefined {
  if (!filter) return undefined;
  const out: CorsPolicy = { unmatchedPreflights: "IGNORE" };
  const origins = (filter.allowOrigins ?? []).filter((o) => o !== "").map(originMatch);
  if (origins.length > 0) out.allowOrigins = origins;
  if (filter.allowCredentials) out.allowCredentials = true;
  if (filter.allowMethods?.length) out.allowMethods = [...filter.allowMethods];
  if (filter.allowHeaders?.length) out.allowHeaders = [...filter.allowHeaders];
  if (filter.exposeHeaders?.length) out.exposeHeaders = [...filter.exposeHeaders];
  if (filter.maxAge !== undefined && filter.maxAge > 0)
    out.maxAge = formatDuration(BigInt(filter.maxAge) * 1_000_000_000n);
  return out;
}
