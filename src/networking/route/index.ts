// Envoy routes (RDS) from VirtualServices, for sidecars and gateways, as Istio builds them.
//
//   buildSidecarRouteConfiguration({ routeName: "8080", proxy, mesh, services, virtualServices })
//   buildGatewayRouteConfiguration({ routeName: "http.8080", proxy, mesh, servers, virtualServicesForGateway, lookupService })
//
// Inputs are explicit (no push context): the caller passes the services a proxy sees and the
// VirtualServices that apply, as the model's VirtualServiceIndex gives them (short names resolved,
// delegates merged, oldest first). Results are new messages the caller must not change; render or
// check them with the API registry.

export { outboundClusterName, parseClusterName } from "../cluster/names.ts";
export {
  buildAllowAnyDynamicDnsRouteConfiguration,
  buildSidecarRouteConfiguration,
  buildSidecarVirtualHosts,
  HTTP_PROXY_ROUTE_NAME,
  MAX_DIRECT_RESPONSE_BODY_SIZE_BYTES,
  parseSidecarRouteName,
  type SidecarRouteInput,
} from "./config.ts";
export {
  buildDefaultInboundRoute,
  buildDefaultOutboundRoute,
  buildDefaultRouteTo,
  DEFAULT_ROUTE_NAME,
  inboundRetryPolicy,
} from "./default-route.ts";
export { destinationCluster, UNKNOWN_SERVICE_CLUSTER } from "./destination.ts";
export {
  buildGatewayRouteConfiguration,
  type GatewayRouteInput,
  type GatewayRoutesMemo,
  type GatewayServerBinding,
} from "./gateway.ts";
export { isCatchAllRoute } from "./match.ts";
export { defaultRetryPolicy, translateRetries } from "./retry.ts";
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
