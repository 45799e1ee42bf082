// Public face of the CDS builders: Istio's clusters for sidecars, gateways and waypoints, as pure functions of
// explicit inputs (service, port, the DestinationRule for its host, proxy, mesh, endpoints).
//
//   const clusters = buildOutboundClusters({ service, port, destinationRule, proxy, mesh, endpoints });
//   const cds = assembleClusters({ proxy, mesh, outbound: clusters, inbound: [buildInboundCluster(...)] });
export { buildInboundCluster, type InboundClusterInput, type InboundEndpoint } from "./inbound.ts";
export { expandStatPattern, statPrefix } from "./metadata.ts";
export {
  ALLOW_ANY_DYNAMIC_DNS_CLUSTER,
  BLACKHOLE_CLUSTER,
  INBOUND_PASSTHROUGH_CLUSTER,
  inboundClusterName,
  outboundClusterName,
  PASSTHROUGH_CLUSTER,
  type ParsedClusterName,
  parseClusterName,
  sniDnatClusterName,
} from "./names.ts";
export { assembleClusters, buildSpecialClusters, type ProxyClusters, type SpecialClusters } from "./order.ts";
export {
  buildOutboundClusters,
  buildSniDnatClusters,
  outboundDiscoveryType,
  supportsDrainingEndpoints,
} from "./outbound.ts";
export { effectiveTrafficPolicy, mergeTrafficPolicy } from "./policy.ts";
export {
  buildAllowAnyDynamicDnsCluster,
  buildBlackHoleCluster,
  buildInboundPassthroughCluster,
  buildPassthroughCluster,
} from "./special.ts";
export { agentSdsSecret, credentialSecret, expandTrustDomains, type IstioTlsContextCache } from "./tls.ts";
export type { AppliedDestinationRule, OutboundClusterInput, ServiceMtlsMode } from "./types.ts";
export {
  buildInboundVipClusters,
  buildWaypointClusters,
  connectTlsContext,
  ENCAP_CLUSTER,
  HBONE_PORT,
  INNER_CONNECT_ORIGINATE,
  MAIN_INTERNAL,
  OUTER_CONNECT_ORIGINATE,
  type WaypointClusters,
} from "./waypoint.ts";
