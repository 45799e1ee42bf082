// GRPCRoutes → VirtualServices: gRPC service/method matches become path matches; otherwise as HTTPRoute.
import type { gatewayapi } from "../config/index.ts";
import { type BackendContext, weightSum } from "./backends.ts";
import { headerOperations, mirrorPolicy, REASON_INVALID_FILTER } from "./filters.ts";
import { type ConvertedRoute, httpDestinations, httpVirtualServices } from "./httproute.ts";
import type { ConfigError } from "./model.ts";
import { attachments, collectRules, computeRoute, type RouteContext, type RuleResult } from "./routes.ts";
import type { HTTPMatchRequest, IstioHTTPRoute, StringMatch } from "./virtualservice.ts";

type Match = gatewayapi.GRPCRouteRulesMatches;

function invalidConfiguration(message: string): ConfigError {
  return { reason: "InvalidConfiguration", message };
}

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
  const headers: Record<string, StringMatch> = {};
  for (const h of match.headers ?? []) {
    const type = h.type ?? "Exact";
    if (type === "Exact") headers[h.name] = { exact: h.value };
    else if (type === "RegularExpression") headers[h.name] = { regex: h.value };
    else return { error: invalidConfiguration(`unknown type: "${type}" is not supported HeaderMatch type`) };
  }
  if (Object.keys(headers).length > 0) request.headers = headers;
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
        const modifier =
          filter.type === "RequestHeaderModifier" ? filter.requestHeaderModifier : filter.responseHeaderModifier;
        const { ops, error } = headerOperations(modifier);
        if (error) return { error };
        if (!ops) break;
        out.headers ??= {};
        if (filter.type === "RequestHeaderModifier") out.headers.request = ops;
        else out.headers.response = ops;
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

function* convertRules(
  ctx: BackendContext,
  route: gatewayapi.GRPCRoute,
  mesh: boolean,
): Generator<RuleResult<IstioHTTPRoute>> {
  for (const [index, rule] of (route.spec?.rules ?? []).entries()) {
    const matches: (Match | undefined)[] = rule.matches?.length ? rule.matches : [undefined];
    for (const match of matches) yield convertRule(ctx, rule, match, route, index, !mesh);
  }
}

export function convertGRPCRoute(route: gatewayapi.GRPCRoute, ctx: RouteContext): ConvertedRoute {
  const computed = computeRoute<IstioHTTPRoute>(route, ctx, (mesh) => collectRules(convertRules(ctx, route, mesh)));
  return {
    keyedVirtualServices: httpVirtualServices(route, ctx, computed),
    virtualServices: [],
    status: computed.status,
    attachments: attachments(computed.bound),
  };
}
