// GRPCRoutes → VirtualServices: gRPC service/method matches become path matches; otherwise as HTTPRoute.
import type { gatewayapi } from "../config/index.ts";
import { type BackendContext, weightSum } from "./backends.ts";
import { applyHeaderFilter, mirrorPolicy, REASON_INVALID_FILTER } from "./filters.ts";
import {
  type ConvertedRoute,
  convertHttpLikeRoute,
  headerMatches,
  httpDestinations,
  invalidConfiguration,
} from "./httproute.ts";
import type { ConfigError } from "./model.ts";
import type { RouteContext, RuleResult } from "./routes.ts";
import type { HTTPMatchRequest, IstioHTTPRoute, StringMatch } from "./virtualservice.ts";

type Match = gatewayapi.GRPCRouteRulesMatches;

// gRPC paths are /<service>/<method>.
function methodMatch(match: Match): { uri?: StringMatch; error?: ConfigError } {
  const m = match.method;
  if (!m) return {};
  const type = m.type ?? "Exact";
  if (m.method === undefined && m.service === undefined) {
    return { error: invalidConfiguration("gRPC match must have method or service defined") };
  }
  if (type === "Exact") {
    if (m.method === undefined) return { uri: { prefix: `/${m.service}/` } };
    if (m.service === undefined) return { uri: { regex: `/[^/]+/${m.method}` } };
    return { uri: { exact: `/${m.service}/${m.method}` } };
  }
  if (type === "RegularExpression") {
    if (m.method === undefined) return { uri: { regex: `/${m.service}/.+` } };
    if (m.service === undefined) return { uri: { regex: `/[^/]+/${m.method}` } };
    return { uri: { regex: `/${m.service}/${m.method}` } };
  }
  return { error: invalidConfiguration(`unknown type: "${type}" is not supported Path match type`) };
}

function matchRequest(match: Match): { request?: HTTPMatchRequest; error?: ConfigError } {
  const uri = methodMatch(match);
  if (uri.error) return { error: uri.error };
  const request: HTTPMatchRequest = {};
  if (uri.uri) request.uri = uri.uri;
  const headers = headerMatches(match.headers, "HeaderMatch");
  if (headers.error) return { error: headers.error };
  if (headers.matches) request.headers = headers.matches;
  return { request };
}

function convertRule(
  ctx: BackendContext,
  rule: gatewayapi.GRPCRouteRules,
  match: Match | undefined,
  route: gatewayapi.GRPCRoute,
  index: number,
  enforceGrant: boolean,
): RuleResult<IstioHTTPRoute> {
  const namespace = route.metadata.namespace ?? "";
  const out: IstioHTTPRoute = { name: rule.name ?? `${namespace}.${route.metadata.name}.${index}` };
  if (match) {
    const request = matchRequest(match);
    if (!request.request) return { error: request.error };
    out.match = [request.request];
  }
  for (const filter of rule.filters ?? []) {
    switch (filter.type) {
      case "RequestHeaderModifier":
      case "ResponseHeaderModifier": {
        const error = applyHeaderFilter(out, filter);
        if (error) return { error };
        break;
      }
      case "RequestMirror": {
        if (!filter.requestMirror) break;
        const { mirror, error } = mirrorPolicy(ctx, filter.requestMirror, namespace, "GRPCRoute", enforceGrant);
        if (error) return { error };
        if (mirror) out.mirrors = [...(out.mirrors ?? []), mirror];
        break;
      }
      default:
        return { error: { reason: REASON_INVALID_FILTER, message: `unsupported filter type "${filter.type}"` } };
    }
  }
  const backendRefs = rule.backendRefs ?? [];
  if (weightSum(backendRefs) === 0) {
    out.directResponse = { status: 500 };
    return { route: out };
  }
  const built = httpDestinations(ctx, backendRefs, namespace, "GRPCRoute", enforceGrant);
  if (built.error) return { error: built.error };
  if (built.destinations && built.destinations.length > 0) out.route = built.destinations;
  return { route: out, error: built.invalid };
}

export function convertGRPCRoute(route: gatewayapi.GRPCRoute, ctx: RouteContext): ConvertedRoute {
  return convertHttpLikeRoute(route, ctx, (rule, match, index, enforceGrant) =>
    convertRule(ctx, rule, match, route, index, enforceGrant),
  );
}
