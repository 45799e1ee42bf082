// HTTPRoutes → VirtualServices: one Istio HTTPRoute per (rule, match), one VirtualService per
// (listener or mesh service, hostname), merged across routes later.
import type { ConfigObject, gatewayapi } from "../config/index.ts";
import { type BackendContext, buildDestination, effectiveWeights, isInvalidBackend, weightSum } from "./backends.ts";
import { formatDuration, parseDuration } from "./duration.ts";
import {
  applyHeaderFilter,
  corsPolicy,
  type HeaderFilter,
  isHeaderFilter,
  mirrorPolicy,
  REASON_INVALID_FILTER,
  redirect,
  rewrite,
} from "./filters.ts";
import type { ConfigError } from "./model.ts";
import { joinErrors } from "./model.ts";
import { generatedMetadata, routeAnnotations } from "./naming.ts";
import { hostnameAllowedByIsolation, isMesh, type ParentRef } from "./parents.ts";
import {
  attachments,
  collectRules,
  computeRoute,
  meshHosts,
  type RouteContext,
  type RuleResult,
  withPortMatch,
} from "./routes.ts";
import {
  type HTTPMatchRequest,
  type HTTPRouteDestination,
  type IstioHTTPRoute,
  type KeyedVirtualService,
  type StringMatch,
  sortHTTPRoutes,
} from "./virtualservice.ts";

type Rule = gatewayapi.HTTPRouteRules;
type Match = gatewayapi.HTTPRouteRulesMatches;

export interface ConvertedRoute {
  /** HTTP-like VirtualServices, merged with others of the same key. */
  keyedVirtualServices: KeyedVirtualService[];
  /** L4 VirtualServices, never merged. */
  virtualServices: ConfigObject[];
  status: Record<string, unknown>;
  attachments: string[];
}

export function invalidConfiguration(message: string): ConfigError {
  return { reason: "InvalidConfiguration", message };
}

export function headerMatches(
  headers: readonly gatewayapi.RulesMatchesHeaders[] | undefined,
  what: string,
): { matches?: Record<string, StringMatch>; error?: ConfigError } {
  if (!headers || headers.length === 0) return {};
  const matches: Record<string, StringMatch> = {};
  for (const h of headers) {
    const type = h.type ?? "Exact";
    if (type === "Exact") matches[h.name] = { exact: h.value };
    else if (type === "RegularExpression") matches[h.name] = { regex: h.value };
    else return { error: invalidConfiguration(`unknown type: "${type}" is not supported ${what} type`) };
  }
  return { matches };
}

function uriMatch(match: Match): { uri?: StringMatch; error?: ConfigError } {
  const type = match.path?.type ?? "PathPrefix";
  const value = match.path?.value ?? "/";
  switch (type) {
    case "PathPrefix":
      // "When specified, a trailing `/` is ignored."
      return { uri: { prefix: value !== "/" ? value.replace(/\/$/, "") : value } };
    case "Exact":
      return { uri: { exact: value } };
    case "RegularExpression":
      return { uri: { regex: value } };
    default:
      return { error: invalidConfiguration(`unknown type: "${type}" is not supported Path match type`) };
  }
}

function matchRequest(match: Match): { request?: HTTPMatchRequest; error?: ConfigError } {
  const uri = uriMatch(match);
  if (uri.error) return { error: uri.error };
  const headers = headerMatches(match.headers, "HeaderMatch");
  if (headers.error) return { error: headers.error };
  const query = headerMatches(match.queryParams, "QueryParams");
  if (query.error) return { error: query.error };
  const request: HTTPMatchRequest = { uri: uri.uri };
  if (headers.matches) request.headers = headers.matches;
  if (query.matches) request.queryParams = query.matches;
  if (match.method) request.method = { exact: match.method };
  return { request };
}

/** Destinations of a rule, each with its own header filters; a hard error fails the rule. */
export function httpDestinations(
  ctx: BackendContext,
  refs: readonly (gatewayapi.RulesBackendRefs & { filters?: readonly HeaderFilter[] })[],
  namespace: string,
  fromKind: string,
  enforceGrant: boolean,
): { destinations?: HTTPRouteDestination[]; invalid?: ConfigError; error?: ConfigError } {
  let invalid: ConfigError | undefined;
  const destinations: HTTPRouteDestination[] = [];
  for (const { ref, weight } of effectiveWeights(refs)) {
    const built = buildDestination(ctx, ref, namespace, fromKind, enforceGrant);
    if (built.error) {
      if (!isInvalidBackend(built.error)) return { error: built.error };
      invalid = built.error;
    }
    const destination: HTTPRouteDestination = { destination: built.destination };
    if (weight !== 0) destination.weight = weight;
    for (const filter of ref.filters ?? []) {
      if (!isHeaderFilter(filter)) {
        return { error: { reason: REASON_INVALID_FILTER, message: `unsupported filter type "${filter.type}"` } };
      }
      const error = applyHeaderFilter(destination, filter);
      if (error) return { error };
    }
    destinations.push(destination);
  }
  return { destinations, invalid };
}

function ruleName(rule: { name?: string }, route: ConfigObject, index: number): string {
  return rule.name ?? `${route.metadata.namespace}.${route.metadata.name}.${index}`;
}

function convertRule(
  ctx: BackendContext,
  rule: Rule,
  match: Match | undefined,
  route: ConfigObject,
  index: number,
  enforceGrant: boolean,
): RuleResult<IstioHTTPRoute> {
  const namespace = route.metadata.namespace ?? "";
  const out: IstioHTTPRoute = { name: ruleName(rule, route, index) };
  if (match) {
    const request = matchRequest(match);
    if (!request.request) return { error: request.error };
    out.match = [request.request];
  }
  let mirrorError: ConfigError | undefined;
  for (const filter of rule.filters ?? []) {
    switch (filter.type) {
      case "RequestHeaderModifier":
      case "ResponseHeaderModifier": {
        const error = applyHeaderFilter(out, filter);
        if (error) return { error };
        break;
      }
      case "RequestRedirect":
        out.redirect = redirect(filter.requestRedirect);
        break;
      case "RequestMirror": {
        if (!filter.requestMirror) break;
        const { mirror, error } = mirrorPolicy(ctx, filter.requestMirror, namespace, "HTTPRoute", enforceGrant);
        if (error) mirrorError = error;
        else if (mirror) out.mirrors = [...(out.mirrors ?? []), mirror];
        break;
      }
      case "URLRewrite":
        out.rewrite = rewrite(filter.urlRewrite);
        break;
      case "CORS":
        out.corsPolicy = corsPolicy(filter.cors);
        break;
      default:
        return { error: { reason: REASON_INVALID_FILTER, message: `unsupported filter type "${filter.type}"` } };
    }
  }
  if (rule.retry) {
    // Retry on connection errors whenever a retry stanza is set; Istio's default of 2 attempts otherwise.
    const retryOn = [
      "connect-failure",
      "refused-stream",
      "unavailable",
      "cancelled",
      ...(rule.retry.codes ?? []).map(String),
    ];
    const attempts = rule.retry.attempts ?? 2;
    out.retries = { attempts, retryOn: retryOn.join(",") };
    if (attempts === 0) out.retries = {};
    if (rule.retry.backoff !== undefined) out.retries.backoff = formatDuration(parseDuration(rule.retry.backoff));
  }
  if (rule.timeouts) {
    const request = rule.timeouts.request === undefined ? 0n : parseDuration(rule.timeouts.request);
    if (request !== 0n) out.timeout = formatDuration(request);
    const backend = rule.timeouts.backendRequest === undefined ? 0n : parseDuration(rule.timeouts.backendRequest);
    if (backend !== 0n) {
      if (out.retries) out.retries.perTryTimeout = formatDuration(backend);
      else out.timeout = formatDuration(backend);
    }
  }
  const backendRefs = rule.backendRefs ?? [];
  if (weightSum(backendRefs) === 0 && !out.redirect) {
    // No backend with weight: the spec asks for a 500.
    out.directResponse = { status: 500 };
    return { route: out, error: mirrorError };
  }
  const built = httpDestinations(ctx, backendRefs, namespace, "HTTPRoute", enforceGrant);
  if (built.error) return { error: built.error };
  if (built.destinations && built.destinations.length > 0) out.route = built.destinations;
  return { route: out, error: joinErrors(built.invalid, mirrorError) };
}

/** VirtualServices of an HTTP-like route (HTTPRoute, GRPCRoute): one per bound parent and hostname. */
function httpVirtualServices(
  route: ConfigObject<{ hostnames?: string[] }>,
  ctx: RouteContext,
  computed: ReturnType<typeof computeRoute<IstioHTTPRoute>>,
): KeyedVirtualService[] {
  const namespace = route.metadata.namespace ?? "";
  const out: KeyedVirtualService[] = [];
  let count = 0;
  for (const parent of computed.bound) {
    let key = parent.internalName;
    let hosts = route.spec?.hostnames?.length ? [...route.spec.hostnames] : ["*"];
    let routes = computed.gateway.routes ?? [];
    if (isMesh(parent)) {
      routes = computed.mesh.routes ?? [];
      key = namespace;
      const port = parent.originalReference.port;
      if (port !== undefined) {
        routes = withPortMatch(routes, port);
        key += `/${port}`;
      }
      hosts = meshHosts(route, parent, ctx.cluster, ctx.settings.domainSuffix);
    }
    if (routes.length === 0) continue;
    for (const host of hosts) {
      if (!hostnameAllowedByIsolation(parent, host)) continue;
      const name = `${route.metadata.name}~${count}~istio-autogenerated-k8s-gateway`;
      out.push({
        key: `${key}/${host}`,
        config: {
          apiVersion: "networking.istio.io/v1",
          kind: "VirtualService",
          metadata: generatedMetadata(route, name, namespace, routeAnnotations(route)),
          spec: { hosts: [host], gateways: [parent.internalName], http: sortHTTPRoutes(routes) },
        },
      });
      count++;
    }
  }
  return out;
}

export function convertHTTPRoute(route: gatewayapi.HTTPRoute, ctx: RouteContext): ConvertedRoute {
  return convertHttpLikeRoute(route, ctx, (rule, match, index, enforceGrant) =>
    convertRule(ctx, rule, match, route, index, enforceGrant),
  );
}

/**
 * An HTTP-like route (HTTPRoute, GRPCRoute): `convertRule` makes one Istio HTTP route per rule and
 * match (a rule without matches is one match-less route), for gateway parents and for mesh parents.
 */
export function convertHttpLikeRoute<Rule extends { matches?: unknown[] }>(
  route: ConfigObject<{ hostnames?: string[]; parentRefs?: ParentRef[]; rules?: Rule[] }>,
  ctx: RouteContext,
  convertRule: (
    rule: Rule,
    match: NonNullable<Rule["matches"]>[number] | undefined,
    index: number,
    enforceGrant: boolean,
  ) => RuleResult<IstioHTTPRoute>,
): ConvertedRoute {
  function* convertRules(mesh: boolean): Generator<RuleResult<IstioHTTPRoute>> {
    for (const [index, rule] of (route.spec?.rules ?? []).entries()) {
      const matches = rule.matches?.length ? rule.matches : [undefined];
      for (const match of matches) yield convertRule(rule, match, index, !mesh);
    }
  }
  const computed = computeRoute<IstioHTTPRoute>(route, ctx, (mesh) => collectRules(convertRules(mesh)));
  return {
    keyedVirtualServices: httpVirtualServices(route, ctx, computed),
    virtualServices: [],
    status: computed.status,
    attachments: attachments(computed.bound),
  };
}
