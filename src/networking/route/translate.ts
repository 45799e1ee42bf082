// One VirtualService http rule → Envoy Routes (Istio route.go BuildHTTPRoutesForVirtualService and
// TranslateRoute). A rule gives one route per match that applies to the proxy (port, source labels,
// source namespace, gateways); a catch-all route ends the list, as nothing after it can match.
import { create } from "@bufbuild/protobuf";
import { core, cors, fault, packAny, preEncoded, route, type statefulSession } from "../../api/index.ts";
import type { VirtualServiceHttp, VirtualServiceHttpMatch } from "../../config/index.ts";
import { usesGatewaySemantics } from "../../model/index.ts";
import { type Memos, weakTable } from "../../util/index.ts";
import { parseClusterName } from "../cluster/names.ts";
import { STATEFUL_SESSION_FILTER, statefulSessionConfig, statefulSessionPerRoute } from "../httpfilter/index.ts";
import { CORS_FILTER, translateCorsPolicy } from "./cors.ts";
import { addDestinationHeaders, applyDestinations } from "./destination.ts";
import { translateDirectResponse } from "./direct-response.ts";
import { FAULT_FILTER, translateFault } from "./fault.ts";
import { http3AltSvcHeader, translateHeaderOperations } from "./headers.ts";
import { isCatchAllRoute, routeMatchFor, sourceMatches } from "./match.ts";
import { newDecorator, newRoute, newRouteAction } from "./message.ts";
import { translateMirrors } from "./mirror.ts";
import { routeProxyHeaders } from "./proxy-headers.ts";
import { translateRedirect } from "./redirect.ts";
import { translateRetries } from "./retry.ts";
import { applyRewrite } from "./rewrite.ts";
import { applyTimeout } from "./timeout.ts";
import type { RouteContext, VirtualService } from "./types.ts";

/** A VirtualService translated from an Ingress (Istio's UseIngressSemantics). */
function usesIngressSemantics(vs: VirtualService): boolean {
  return vs.metadata.annotations?.["internal.istio.io/route-semantics"] === "ingress";
}

// One Metadata per VirtualService, by its metadata object (kept by the per-push copies of a
// VirtualService): every route of the VirtualService shares it, in every push, pre-encoded.
const CONFIG_METADATA = weakTable<VirtualService["metadata"], core.Metadata>("route/configMetadata");

/** `metadata.filter_metadata.istio.config` naming the VirtualService a route came from; shared, never change it. */
export function configMetadata(memos: Memos, vs: VirtualService): core.Metadata {
  const configMetadataByObject = memos.weak(CONFIG_METADATA);
  let metadata = configMetadataByObject.get(vs.metadata);
  if (!metadata) {
    const path = `/apis/networking.istio.io/v1/namespaces/${vs.metadata.namespace ?? ""}/virtual-service/${vs.metadata.name ?? ""}`;
    metadata = preEncoded(
      core.MetadataSchema,
      create(core.MetadataSchema, { filterMetadata: { istio: { config: path } } }),
    );
    configMetadataByObject.set(vs.metadata, metadata);
  }
  return metadata;
}

/**
 * The tracing operation (Istio's GetRouteOperation): `<host>:<port><path>` when the route goes to one
 * `outbound|…` cluster, else `<virtual service name>:<listener port><path>` (only then is the port read).
 */
export function routeOperation(r: route.Route, vsName: string, ctx: Pick<RouteContext, "listenerPort">): string {
  const p = r.match?.pathSpecifier;
  let path = "/*";
  if (p?.case === "prefix") path = `${p.value}*`;
  else if (p?.case === "path") path = p.value;
  else if (p?.case === "safeRegex") path = p.value.regex;
  if (r.action.case === "route" && r.action.value.clusterSpecifier.case === "cluster") {
    const parsed = parseClusterName(r.action.value.clusterSpecifier.value);
    if (parsed) return `${parsed.hostname}:${parsed.port}${path}`;
  }
  return `${vsName}:${ctx.listenerPort}${path}`;
}

/**
 * A rule's forward action, shared by the routes of its matches (their actions differ only in a Gateway
 * API prefix rewrite, by the path-separated prefix matched).
 */
export interface RuleAction {
  separatedPrefix: string | undefined;
  action: route.RouteAction;
}

/** The route action for a rule that forwards (not a redirect or direct response). */
function forwardAction(
  out: route.Route,
  http: VirtualServiceHttp,
  authority: string,
  vs: VirtualService,
  ctx: RouteContext,
  shared: { forward?: RuleAction },
): route.RouteAction {
  const gatewaySemantics = usesGatewaySemantics(vs);
  const matched = out.match?.pathSpecifier;
  const separatedPrefix =
    gatewaySemantics && http.rewrite && matched?.case === "pathSeparatedPrefix" ? matched.value : undefined;
  if (shared.forward && shared.forward.separatedPrefix === separatedPrefix) {
    // The one part of the destinations on the route rather than the action.
    addDestinationHeaders(ctx.memos, out, http.route ?? []);
    return shared.forward.action;
  }
  const action = newRouteAction();
  applyTimeout(action, http.timeout, ctx.proxy);
  // Gateway API: a backend that does not exist answers 500.
  if (gatewaySemantics)
    action.clusterNotFoundResponseCode = route.RouteAction_ClusterNotFoundResponseCode.INTERNAL_SERVER_ERROR;
  let host = authority;
  if (http.rewrite) {
    action.appendXForwardedHost = routeProxyHeaders(ctx.mesh).appendXForwardedHost;
    const rewritten = applyRewrite(action, http.rewrite, separatedPrefix);
    if (rewritten !== "") host = rewritten;
  }
  if (host !== "") action.hostRewriteSpecifier = { case: "hostRewriteLiteral", value: host };
  action.requestMirrorPolicies = translateMirrors(http, ctx);
  const consistentHash = applyDestinations(out, action, http.route ?? [], ctx);
  const policy = translateRetries(
    ctx.memos,
    http.retries ?? (ctx.mesh.defaultHttpRetryPolicy as VirtualServiceHttp["retries"]),
    consistentHash,
  );
  if (policy) action.retryPolicy = policy;
  shared.forward = { separatedPrefix, action };
  return action;
}

/**
 * Istio's TranslateRoute: the route for one match of a rule, or undefined when the match does not apply
 * here. `shared` holds what the routes of the rule's matches share, filled by the first that builds it.
 */
export function translateRoute(
  http: VirtualServiceHttp,
  match: VirtualServiceHttpMatch | undefined,
  vs: VirtualService,
  ctx: RouteContext,
  shared: { forward?: RuleAction } = {},
): route.Route | undefined {
  if (match?.port && match.port !== ctx.listenerPort) return undefined;
  if (!sourceMatches(match, ctx.proxy, ctx.gatewayNames)) return undefined;

  const out = newRoute();
  out.name = match?.name ? `${http.name ?? ""}.${match.name}` : (http.name ?? "");
  out.match = routeMatchFor(ctx.memos, match, usesGatewaySemantics(vs) || usesIngressSemantics(vs));
  out.metadata = configMetadata(ctx.memos, vs);
  out.statPrefix = match?.statPrefix ?? "";

  let authority = "";
  if (http.headers) {
    // The shared operations' lists are copied: destinations and HTTP/3 add to the route's.
    const ops = translateHeaderOperations(ctx.memos, http.headers);
    out.requestHeadersToAdd = [...ops.requestHeadersToAdd];
    out.responseHeadersToAdd = [...ops.responseHeadersToAdd];
    out.requestHeadersToRemove = [...ops.requestHeadersToRemove];
    out.responseHeadersToRemove = [...ops.responseHeadersToRemove];
    authority = ops.authority;
  }

  if (http.redirect) {
    const redirect = translateRedirect(http.redirect, ctx.listenerPort, ctx.isTls);
    // Istio would send a route without an action, which Envoy rejects with the whole configuration.
    if (!redirect) return undefined;
    out.action = { case: "redirect", value: redirect };
  } else if (http.directResponse) {
    out.action = { case: "directResponse", value: translateDirectResponse(http.directResponse) };
  } else {
    out.action = { case: "route", value: forwardAction(out, http, authority, vs, ctx, shared) };
  }

  out.decorator = newDecorator(routeOperation(out, vs.metadata.name ?? "", ctx));
  if (http.fault) {
    const f = translateFault(http.fault);
    // A fault with nothing Envoy supports (exponential delay, HTTP/2 error) adds no config.
    if (f) out.typedPerFilterConfig[FAULT_FILTER] = packAny(fault.HTTPFaultSchema, f);
  }
  if (http.corsPolicy) {
    out.typedPerFilterConfig[CORS_FILTER] = packAny(cors.CorsPolicySchema, translateCorsPolicy(http.corsPolicy));
  }
  const session = out.action.case === "route" ? routeSession(http, ctx) : undefined;
  if (session) out.typedPerFilterConfig[STATEFUL_SESSION_FILTER] = statefulSessionPerRoute(session);
  if (ctx.advertiseHttp3) out.responseHeadersToAdd.push(http3AltSvcHeader(ctx.listenerPort));
  return out;
}

/**
 * The persistent session of a forwarding route's destinations (Istio's TranslateRoute): each destination
 * (with weight, when several) in turn replaces the choice, except that a second one with a session keeps the first.
 */
function routeSession(http: VirtualServiceHttp, ctx: RouteContext): statefulSession.StatefulSession | undefined {
  if (!ctx.persistentSessions) return undefined;
  const routes = http.route ?? [];
  const destinations = routes.length === 1 ? routes : routes.filter((r) => (r.weight ?? 0) !== 0);
  let chosen: statefulSession.StatefulSession | undefined;
  for (const { destination } of destinations) {
    const service = ctx.lookupService(destination.host);
    const session = service && statefulSessionConfig(service.labels);
    if (session && chosen) break;
    chosen = session;
  }
  return chosen;
}

/**
 * Istio's BuildHTTPRoutesForVirtualService: the routes of every http rule, in order, for this proxy and
 * port; stops after the first catch-all. An empty list means the VirtualService does not apply here.
 */
export function buildVirtualServiceRoutes(
  vs: VirtualService,
  ctx: RouteContext,
  // A waypoint drops the matches on source labels: ambient does not know the client's labels.
  options: { dropSourceLabelMatches?: boolean } = {},
): route.Route[] {
  const out: route.Route[] = [];
  for (const http of vs.spec?.http ?? []) {
    let catchAll = false;
    if (!http.match || http.match.length === 0) {
      const r = translateRoute(http, undefined, vs, ctx);
      if (r) out.push(r);
      catchAll = true;
    } else {
      const shared = {};
      for (const match of http.match) {
        if (options.dropSourceLabelMatches && Object.keys(match.sourceLabels ?? {}).length > 0) continue;
        const r = translateRoute(http, match, vs, ctx, shared);
        if (!r) continue;
        out.push(r);
        if (isCatchAllRoute(r)) {
          catchAll = true;
          break;
        }
      }
    }
    if (catchAll) break;
  }
  return out;
}
