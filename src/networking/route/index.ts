// Envoy routes (RDS) from VirtualServices, for sidecars and gateways, as Istio builds them.
//
//   buildSidecarRouteConfiguration({ routeName: "8080", proxy, mesh, services, virtualServices })
//   buildGatewayRouteConfiguration({ routeName: "http.8080", proxy, mesh, servers, virtualServicesForGateway, lookupService })
//
// Inputs are explicit (no push context): the caller selects and orders the VirtualServices (oldest
// first; merged with mergeDelegates) and the services a proxy sees. Results are new messages the
// caller must not change; render or check them with `routeRegistry` (it knows the retry extensions).
export {
  buildSidecarRouteConfiguration,
  buildSidecarVirtualHosts,
  HTTP_PROXY_ROUTE_NAME,
  MAX_DIRECT_RESPONSE_BODY_SIZE_BYTES,
  parseSidecarRouteName,
  type SidecarRouteInput,
  sortByCreationTime,
} from "./config.ts";
export {
  buildDefaultInboundRoute,
  buildDefaultOutboundRoute,
  DEFAULT_ROUTE_NAME,
  inboundRetryPolicy,
} from "./default-route.ts";
export { exportedTo, isRootVirtualService, mergeDelegates } from "./delegate.ts";
export { destinationCluster, outboundClusterName, parseClusterName, UNKNOWN_SERVICE_CLUSTER } from "./destination.ts";
export {
  buildGatewayRouteConfiguration,
  type GatewayRouteInput,
  type GatewayServerBinding,
  gatewayRouteName,
} from "./gateway.ts";
export { isCatchAllRoute } from "./match.ts";
export { defaultRetryPolicy, translateRetries } from "./retry.ts";
export { routeRegistry } from "./retry-extensions.ts";
export { resolveGatewayName, resolveShortname, resolveShortnames } from "./shortnames.ts";
export { buildVirtualServiceRoutes, translateRoute } from "./translate.ts";
export { MESH_GATEWAY, type RouteContext } from "./types.ts";
export {
  ALLOW_ANY,
  ALLOW_ANY_DYNAMIC_DNS,
  BLOCK_ALL,
  catchAllVirtualHost,
  type OutboundTrafficMode,
  PASSTHROUGH_CLUSTER,
  serviceDomains,
} from "./vhost.ts";
