// One VirtualService HTTP route (validation-rules.md §4.1), checked in Istio's order: conflicts,
// matches, header operations, CORS, fault, mirrors, redirect, direct response, retries, rewrite,
// authority, destinations, timeout.
import {
  asObject,
  asString,
  asStringMap,
  CORS_UNMATCHED_PREFLIGHTS,
  checkDurationField,
  corsHeaderNameError,
  field,
  forEachMessage,
  goFixed,
  goQuote,
  HTTP_REDIRECT_PORT_SELECTION,
  has,
  headerOperationNameError,
  headerValueError,
  isDns1123Label,
  type JsonObject,
  listField,
  mapEntries,
  matchHeaderNameError,
  numberField,
  objectField,
  portError,
  readEnum,
  regexError,
  report,
  requestHeaderSetNameError,
  stringField,
  stringListField,
  validateDestination,
  validateGatewayNames,
  validateHttpRetry,
  validateLabels,
  validatePercentMessage,
  validateStringMatch,
  validateStringMatchRegex,
  wrappedNumber,
} from "./common/index.ts";
import type { Findings } from "./findings.ts";

const MiB = 1024 * 1024;
const KiB = 1024;

/** Where a route sits: inside a delegate VirtualService, a root route that delegates, or neither. */
type RouteRole = "independent" | "root" | "delegate";

/**
 * Validates `spec.http[i]`; `out` is positioned at it. `delegateVs` is true for a VirtualService
 * without hosts; `gatewaySemantics` skips destination checks (Gateway API derived routes).
 */
export function validateHttpRoute(
  route: JsonObject,
  delegateVs: boolean,
  gatewaySemantics: boolean,
  out: Findings,
): void {
  const role: RouteRole = delegateVs ? "delegate" : has(route, "delegate") ? "root" : "independent";
  validateConflicts(route, role, out);
  validateMatches(route, out);
  validateHeaderOperations(field(route, "headers"), out.at("headers"));
  validateCorsPolicy(objectField(route, "corsPolicy"), out.at("corsPolicy"));
  validateFault(objectField(route, "fault"), out.at("fault"));
  validateMirrorPercent(route, out);
  validateDestination(field(route, "mirror"), out.at("mirror"));
  validateMirrors(listField(route, "mirrors") ?? [], out);
  validateRedirect(objectField(route, "redirect"), listField(route, "match") ?? [], out.at("redirect"));
  validateDirectResponse(objectField(route, "directResponse"), out.at("directResponse"));
  const retries = objectField(route, "retries");
  if (retries) validateHttpRetry(retries, out.at("retries"));
  validateRewrite(objectField(route, "rewrite"), out.at("rewrite"));
  validateAuthorityRewrite(route, out);
  validateRouteDestinations(listField(route, "route") ?? [], "http", gatewaySemantics, out.at("route"));
  checkDurationField(route, "timeout", out);
}

function validateConflicts(route: JsonObject, role: RouteRole, out: Findings): void {
  const routeName = stringField(route, "name");
  const destinations = listField(route, "route");
  if (role === "root") {
    if (has(route, "redirect")) out.error(`root HTTP route ${routeName} must not specify redirect`);
    if (destinations) out.error(`root HTTP route ${routeName} must not specify route`);
    return;
  }
  if (role === "delegate" && has(route, "delegate")) out.error("delegate HTTP route cannot contain delegate");
  if (has(route, "redirect")) {
    if (destinations) out.error("HTTP route cannot contain both route and redirect");
    if (has(route, "fault")) out.error("HTTP route cannot contain both fault and redirect");
    if (has(route, "rewrite")) out.error("HTTP route rule cannot contain both rewrite and redirect");
    if (has(route, "directResponse")) out.error("HTTP route rule cannot contain both direct_response and redirect");
  } else if (has(route, "directResponse")) {
    if (destinations) out.error("HTTP route cannot contain both route and direct_response");
    if (has(route, "fault")) out.error("HTTP route cannot contain both fault and direct_response");
    if (has(route, "rewrite")) out.error("HTTP route rule cannot contain both rewrite and direct_response");
  } else if (!destinations) {
    out.error("HTTP route, redirect or direct_response is required");
  }
  if (has(route, "mirror") && listField(route, "mirrors")) {
    out.error("HTTP route cannot contain both mirror and mirrors");
  }
}

// Istio checks the string matches of every match first, then ports, labels, gateways and namespaces.
function validateMatches(route: JsonObject, out: Findings): void {
  const matches = listField(route, "match") ?? [];
  matches.forEach((value, i) => {
    const match = asObject(value);
    if (match) validateMatchStrings(match, out.at("match", i));
  });
  matches.forEach((value, i) => {
    const match = asObject(value);
    if (match) validateMatchSources(match, out.at("match", i));
  });
}

function validateMatchStrings(match: JsonObject, out: Findings): void {
  for (const [name, header] of mapEntries(match, "headers")) {
    const at = out.at("headers").at(name);
    if (header === null) at.error(`header match ${name} cannot be null`);
    report(at, matchHeaderNameError(name));
    validateStringMatch(header, "headers", at);
  }
  for (const [name, header] of mapEntries(match, "withoutHeaders")) {
    const at = out.at("withoutHeaders").at(name);
    report(at, matchHeaderNameError(name));
    // A regex of `*` is not RE2: Istio turns it into a presence match.
    if (asObject(header)?.regex !== "*") validateStringMatch(header, "withoutHeaders", at);
  }
  const uri = objectField(match, "uri");
  if (uri) validateStringMatchRegex(uri, "uri", out.at("uri"));
  for (const name of ["scheme", "method", "authority"]) {
    validateStringMatch(field(match, name), name, out.at(name));
  }
  for (const [name, value] of mapEntries(match, "queryParams")) {
    validateStringMatch(value, "queryParams", out.at("queryParams").at(name));
  }
}

function validateMatchSources(match: JsonObject, out: Findings): void {
  const port = numberField(match, "port");
  if (port !== 0) report(out.at("port"), portError(port));
  validateLabels(asStringMap(field(match, "sourceLabels")) ?? {}, out.at("sourceLabels"));
  validateGatewayNames(stringListField(match, "gateways"), false, out.at("gateways"));
  const sourceNamespace = stringField(match, "sourceNamespace");
  if (sourceNamespace !== "" && !isDns1123Label(sourceNamespace)) {
    out.at("sourceNamespace").error(`sourceNamespace match ${sourceNamespace} is invalid`);
  }
}

/** `headers.request` / `headers.response` add, set and remove, on a route or on one destination. */
export function validateHeaderOperations(headers: unknown, out: Findings): void {
  const ops = asObject(headers);
  if (!ops) return;
  for (const side of ["request", "response"] as const) {
    const section = objectField(ops, side);
    if (!section) continue;
    const at = out.at(side);
    // Request add/set may target the authority (checked separately); everything else may not touch Host.
    const nameError = side === "request" ? requestHeaderSetNameError : headerOperationNameError;
    for (const op of ["add", "set"]) {
      for (const [name, value] of mapEntries(section, op)) {
        const opAt = at.at(op).at(name);
        report(opAt, nameError(name));
        report(opAt, headerValueError(asString(value)));
      }
    }
    stringListField(section, "remove").forEach((name, i) => {
      report(at.at("remove", i), headerOperationNameError(name));
    });
  }
}

const CORS_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE", "*"]);
const NANOS_PER_SECOND = 1_000_000_000n;

function validateCorsPolicy(policy: JsonObject | undefined, out: Findings): void {
  if (!policy) return;
  (listField(policy, "allowOrigins") ?? []).forEach((value, i) => {
    const at = out.at("allowOrigins", i);
    const origin = asObject(value) ?? {};
    const pattern = ["exact", "prefix", "regex"].map((k) => asString(origin[k])).find((v) => v !== "") ?? "";
    if (pattern === "") at.error(`'' is not a valid match type for CORS allow origins`);
    else validateStringMatchRegex(origin, "corsPolicy.allowOrigins", at);
  });
  stringListField(policy, "allowMethods").forEach((method, i) => {
    if (!CORS_METHODS.has(method)) out.at("allowMethods", i).error(`${goQuote(method)} is not a supported HTTP method`);
  });
  for (const name of ["allowHeaders", "exposeHeaders"]) {
    stringListField(policy, name).forEach((header, i) => {
      report(out.at(name, i), corsHeaderNameError(header));
    });
  }
  readEnum(field(policy, "unmatchedPreflights"), CORS_UNMATCHED_PREFLIGHTS, out.at("unmatchedPreflights"));
  const maxAge = checkDurationField(policy, "maxAge", out)?.nanos;
  if (maxAge !== undefined && maxAge > 0n && maxAge % NANOS_PER_SECOND !== 0n) {
    out.at("maxAge").error("max_age duration is accurate only to seconds precision");
  }
}

/** gRPC status names as Istio accepts them in a fault abort, with their codes (the list is in code order). */
export const GRPC_STATUS_CODES: ReadonlyMap<string, number> = new Map(
  [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
  ].map((name, code) => [name, code]),
);

// Istio accepts 600 although its message says 599.
function httpStatusError(status: number): string | undefined {
  return status >= 200 && status <= 600 ? undefined : `HTTP status ${status} is not in range 200-599`;
}

function validateFault(fault: JsonObject | undefined, out: Findings): void {
  if (!fault) return;
  const abort = objectField(fault, "abort");
  const delay = objectField(fault, "delay");
  if (!abort && !delay) out.error("HTTP fault injection must have an abort and/or a delay");
  if (abort) {
    const at = out.at("abort");
    validatePercentMessage(field(abort, "percentage"), at.at("percentage"));
    if (has(abort, "grpcStatus")) {
      const status = stringField(abort, "grpcStatus");
      if (!GRPC_STATUS_CODES.has(status)) {
        at.at("grpcStatus").error(
          `gRPC status ${goQuote(status)} is not supported. See https://github.com/grpc/grpc/blob/master/doc/statuscodes.md for a list of supported codes, for example 'NOT_FOUND'`,
        );
      }
    } else if (has(abort, "http2Error")) {
      at.at("http2Error").error("HTTP/2 abort fault injection not supported yet");
    } else if (has(abort, "httpStatus")) {
      report(at.at("httpStatus"), httpStatusError(numberField(abort, "httpStatus")));
    } else {
      at.warn("abort configured, but error type not set");
    }
  }
  if (delay) {
    const at = out.at("delay");
    validatePercentMessage(field(delay, "percentage"), at.at("percentage"));
    if (has(delay, "fixedDelay")) {
      checkDurationField(delay, "fixedDelay", at);
    } else if (has(delay, "exponentialDelay")) {
      checkDurationField(delay, "exponentialDelay", at);
      at.at("exponentialDelay").error("exponentialDelay not supported yet");
    }
  }
}

function validateMirrorPercent(route: JsonObject, out: Findings): void {
  if (has(route, "mirrorPercent")) {
    const value = wrappedNumber(field(route, "mirrorPercent"));
    const at = out.at("mirrorPercent");
    if (value > 100) at.error(`mirror_percent must have a max value of 100 (it has ${value})`);
    at.warn(`using deprecated setting "mirrorPercent", use "mirrorPercentage" instead`);
  }
  if (has(route, "mirrorPercentage")) {
    const value = wrappedNumber(field(route, "mirrorPercentage"));
    const at = out.at("mirrorPercentage");
    if (value > 100) at.error(`mirror_percentage must have a max value of 100 (it has ${goFixed(value)})`);
    if (value < 0) at.error(`mirror_percentage must have a min value of 0 (it has ${goFixed(value)})`);
  }
}

function validateMirrors(mirrors: unknown[], out: Findings): void {
  forEachMessage(mirrors, out.at("mirrors"), "mirror cannot be null", (mirror, at) => {
    if (!has(mirror, "destination")) {
      at.error("destination is required for mirrors");
      return;
    }
    validateDestination(field(mirror, "destination"), at.at("destination"));
    if (has(mirror, "percentage")) {
      const percent = wrappedNumber(field(mirror, "percentage"));
      const pAt = at.at("percentage");
      if (percent > 100) pAt.error(`mirror percentage must have a max value of 100 (it has ${goFixed(percent)})`);
      if (percent < 0) pAt.error(`mirror percentage must have a min value of 0 (it has ${goFixed(percent)})`);
    }
  });
}

// Only the first failing redirect check is reported, as in Istio.
function validateRedirect(redirect: JsonObject | undefined, matches: unknown[], out: Findings): void {
  if (!redirect) return;
  readEnum(field(redirect, "derivePort"), HTTP_REDIRECT_PORT_SELECTION, out.at("derivePort"));
  report(out, redirectError(redirect, matches));
}

function redirectError(redirect: JsonObject, matches: unknown[]): string | undefined {
  const uri = stringField(redirect, "uri");
  const prefixRewrite = stringField(redirect, "prefixRewrite");
  const scheme = stringField(redirect, "scheme");
  if (uri !== "" && prefixRewrite !== "") return "redirect may only specify one of uri or prefix_rewrite";
  if (prefixRewrite !== "") {
    const nonPrefixUri = matches.some((m) => {
      const matchUri = objectField(asObject(m) ?? {}, "uri");
      return matchUri !== undefined && !has(matchUri, "prefix");
    });
    if (nonPrefixUri) return "redirect prefix_rewrite requires all URI matches to use prefix match type";
  }
  const hasPort = has(redirect, "port") || has(redirect, "derivePort");
  if (uri === "" && prefixRewrite === "" && stringField(redirect, "authority") === "" && !hasPort && scheme === "") {
    return "redirect must specify URI, authority, scheme, or port";
  }
  const code = numberField(redirect, "redirectCode");
  if (code !== 0 && (code < 300 || code > 399)) return `${code} is not a valid redirect code, must be 3xx`;
  if (scheme !== "" && scheme !== "http" && scheme !== "https") {
    return `invalid redirect scheme, must be "http" or "https"`;
  }
  const port = numberField(redirect, "port");
  return port > 0 ? portError(port) : undefined;
}

function validateDirectResponse(response: JsonObject | undefined, out: Findings): void {
  if (!response) return;
  const body = objectField(response, "body");
  if (body) {
    const size = has(body, "string")
      ? Buffer.byteLength(stringField(body, "string"), "utf8")
      : Buffer.from(stringField(body, "bytes"), "base64").length;
    if (size > MiB) {
      out.at("body").error("large direct_responses may impact control plane performance, must be less than 1MB");
    } else if (size > 100 * KiB) {
      out.at("body").warn("large direct_responses may impact control plane performance");
    }
  }
  report(out.at("status"), httpStatusError(numberField(response, "status")));
}

function validateRewrite(rewrite: JsonObject | undefined, out: Findings): void {
  if (!rewrite) return;
  const uri = stringField(rewrite, "uri");
  const regexRewrite = objectField(rewrite, "uriRegexRewrite");
  if (uri !== "" && regexRewrite) {
    out.error("rewrite may only contain one of URI or UriRegexRewrite");
    return;
  }
  if (uri === "" && !regexRewrite && stringField(rewrite, "authority") === "") {
    out.error(
      "rewrite must specify at least one of URI, UriRegexRewrite, or authority. Only one of URI or UriRegexRewrite may be specified",
    );
    return;
  }
  if (!regexRewrite) return;
  const match = stringField(regexRewrite, "match");
  const inner =
    match === "" || stringField(regexRewrite, "rewrite") === ""
      ? "UriRegexRewrite requires both Rewrite and Match fields to be specified"
      : regexError(match, "HTTPRewrite.UriRegexRewrite.Match");
  if (inner) out.at("uriRegexRewrite").error(`UriRegexRewrite has errors\n${inner}`);
}

function isAuthorityHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return lower === ":authority" || lower === "host";
}

// The authority may be rewritten in one place only: rewrite.authority, or a request set/add header.
function validateAuthorityRewrite(route: JsonObject, out: Findings): void {
  let current = stringField(objectField(route, "rewrite") ?? {}, "authority");
  const request = objectField(objectField(route, "headers") ?? {}, "request") ?? {};
  for (const op of ["set", "add"]) {
    for (const [name, value] of mapEntries(request, op)) {
      if (!isAuthorityHeader(name)) continue;
      const next = asString(value);
      if (current !== "") {
        out
          .at("headers.request")
          .at(op)
          .at(name)
          .error(
            `authority header cannot be set multiple times: have ${goQuote(current)}, attempting to set ${goQuote(next)}`,
          );
        return;
      }
      current = next;
    }
  }
}

/**
 * The destinations of an HTTP, TLS or TCP route; only HTTP destinations carry header operations.
 * `out` is positioned at the `route` list.
 */
export function validateRouteDestinations(
  destinations: unknown[],
  kind: "http" | "tcp" | "tls",
  gatewaySemantics: boolean,
  out: Findings,
): void {
  let totalWeight = 0;
  forEachMessage(destinations, out, "weight may not be nil", (destination, at) => {
    if (!has(destination, "destination")) at.error("destination is required");
    if (kind === "http") validateHeaderOperations(field(destination, "headers"), at.at("headers"));
    if (!gatewaySemantics) validateDestination(field(destination, "destination"), at.at("destination"));
    const weight = numberField(destination, "weight");
    if (weight < 0) at.at("weight").error(`weight ${weight} < 0`);
    totalWeight += weight;
  });
  if (destinations.length > 1 && totalWeight === 0) out.error("total destination weight = 0");
}
