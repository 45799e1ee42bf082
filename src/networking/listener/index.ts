// Envoy listeners (LDS) for sidecars, gateways and waypoints, as pure functions of explicit inputs.
export { buildAccessLogs, buildListenerAccessLogs } from "./accesslog.ts";
export { listenerName } from "./address.ts";
export { inboundChainOptions } from "./filterchain-match.ts";
export {
  buildGatewayListeners,
  type GatewayPortInput,
  type GatewayServerInput,
  gatewayRouteName,
  type RouterInput,
} from "./gateway.ts";
export { buildHcmFilter, buildHttpConnectionManager, type HcmOptions } from "./hcm.ts";
export {
  buildSidecarInboundListeners,
  type InboundPolicies,
  type InboundPort,
  reportInboundConflicts,
  type SidecarInboundInput,
} from "./inbound.ts";
export type { MainInternalInput, WaypointServiceInput, WaypointWorkload } from "./main-internal.ts";
export {
  buildSidecarOutboundListeners,
  type EgressListenerInput,
  type SidecarOutboundInput,
} from "./outbound.ts";
export { buildSidecarListeners, type SidecarInput } from "./sidecar.ts";
export { type ProtocolClass, protocolClass } from "./sniffing.ts";
export {
  BLACKHOLE_CLUSTER,
  buildTcpProxyFilter,
  INBOUND_PASSTHROUGH_CLUSTER,
  PASSTHROUGH_CLUSTER,
  type TcpDestination,
  type WeightedCluster,
} from "./tcp.ts";
export { credentialSdsSecret, gatewayTlsContext, inboundMtlsContext, workloadSdsSecret } from "./tls.ts";
export {
  type InterceptionMode,
  interceptionMode,
  type ListenerEnv,
  type MtlsMode,
  type VirtualService,
} from "./types.ts";
export { buildVirtualOutboundListener, VIRTUAL_INBOUND, VIRTUAL_OUTBOUND } from "./virtual.ts";
export { buildWaypointListeners } from "./waypoint.ts";
