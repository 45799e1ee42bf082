// The ordered HTTP filter registry (Istio's listener_builder.go order). A filter is one file
// implementing HttpFilterPlugin, listed here once in its place; the router is always last.
import type { hcm } from "../../api/index.ts";
import { alpn } from "./alpn.ts";
import { cors } from "./cors.ts";
import { customAuthz } from "./custom-authz.ts";
import { dynamicForwardProxy } from "./dynamic-forward-proxy.ts";
import { extensionAuthn, extensionAuthz, extensionStats, extensionUnspecified } from "./extension.ts";
import { fault } from "./fault.ts";
import { grpcStats } from "./grpc-stats.ts";
import { grpcWeb } from "./grpc-web.ts";
import { istioStats } from "./istio-stats.ts";
import { jwt } from "./jwt.ts";
import { metadataExchange } from "./metadata-exchange.ts";
import { rbac } from "./rbac.ts";
import { router } from "./router.ts";
import { statefulSessionFilter } from "./stateful-session.ts";
import type { HttpFilterContext, HttpFilterPlugin } from "./types.ts";
import { waypointUpstreamMetadata } from "./waypoint.ts";

/** Every HTTP filter before the router, in chain order. */
export const HTTP_FILTERS: readonly HttpFilterPlugin[] = Object.freeze([
  metadataExchange,
  customAuthz,
  extensionAuthn,
  jwt,
  extensionAuthz,
  rbac,
  extensionStats,
  extensionUnspecified,
  grpcWeb,
  grpcStats,
  alpn,
  fault,
  cors,
  istioStats,
  statefulSessionFilter,
  dynamicForwardProxy,
]);

/**
 * A waypoint's per-service connection manager (Istio's buildWaypointHTTPFilters around
 * buildHTTPConnectionManager): authorization and authentication first, no metadata exchange (HBONE
 * carries the peer), the upstream peer's metadata and telemetry after the route's filters.
 */
export const WAYPOINT_HTTP_FILTERS: readonly HttpFilterPlugin[] = Object.freeze([
  customAuthz,
  extensionAuthn,
  jwt,
  extensionAuthz,
  rbac,
  grpcWeb,
  grpcStats,
  fault,
  cors,
  extensionStats,
  extensionUnspecified,
  waypointUpstreamMetadata,
  istioStats,
]);

/** The HTTP connection manager's filters for a context: the registry in order, then the router. */
export function buildHttpFilters(
  context: HttpFilterContext,
  filters: readonly HttpFilterPlugin[] = HTTP_FILTERS,
): hcm.HttpFilter[] {
  return [...filters.flatMap((plugin) => plugin.httpFilters(context)), ...router.httpFilters(context)];
}
