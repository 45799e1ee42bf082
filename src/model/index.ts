// The model a push works on: the proxy behind a connection, the push context and request, and the
// snapshot generators read (services, VirtualServices, DestinationRules, Gateways, policies,
// Sidecar scopes).
//
//   const push = buildPushContext(pushInputs(store, registry, mesh, {}, previousPush?.snapshot.inputs), previousPush);
//   const snap = req.push.snapshot;                      // a MeshPushRequest's PushSnapshot
//   const scope = snap.sidecarScope(proxy);              // services, VirtualServices, DRs the proxy sees
//   scope.destinationRule("outbound", proxy.labels, "reviews.bookinfo.svc.cluster.local");
//   snap.mergedGateway(proxy);                           // a router's servers per port
//   snap.mtlsMode(proxy, 9080);                          // STRICT | PERMISSIVE | DISABLE
//
// store-push.ts (the registry, Gateway API conversion and push context over the config store) is not
// re-exported here: it imports the Gateway API conversion, which the agent, importing this file, never
// needs; sluiced, the CLI and the tests import it directly.
export { addressesForProxy, usesAutoAllocatedAddresses } from "./auto-allocate.ts";
export { compareStrings } from "./config-meta.ts";
export type { DestinationRuleIndex } from "./destination-rule-index.ts";
export type { ConsolidatedDestinationRule } from "./destination-rule-merge.ts";
export type { EnvoyFilterIndex } from "./envoy-filter-index.ts";
export { CA_SUFFIX, credentialResourceName } from "./gateway-credentials.ts";
export type { MergedGateway, MergedPort, MergedServer, ServerPort } from "./gateway-merge.ts";
export { gatewayRouteName, isHttpServer, isPassthroughServer, isTlsServer, serverTlsMode } from "./gateway-merge.ts";
export type { ServiceTarget } from "./gateway-select.ts";
export {
  compareHostSpecificity,
  hostSubsetOf,
  hostsMatch,
  isWildcard,
  MESH_GATEWAY,
  mostSpecificHostMatch,
  resolveShortName,
} from "./host.ts";
export { buildPushContext, type MeshPush, type MeshPushRequest } from "./mesh-push.ts";
export {
  type MeshNetworkGateway,
  type NetworkGateway,
  type NetworkGateways,
  resolvedGateways,
} from "./network-gateways.ts";
export type { EffectiveMtls, MtlsMode, PeerAuthenticationIndex } from "./peer-authentication.ts";
export * from "./proxy.ts";
export * from "./push-context.ts";
export { type PushFeatures, pushFeaturesFromEnv } from "./push-features.ts";
export { type PushInputs, pushInputs, sameKeptInputs } from "./push-inputs.ts";
export { ADDRESS_KIND, PUSH_KINDS, SERVICE_KINDS } from "./push-kinds.ts";
export { PushSnapshot } from "./push-snapshot.ts";
export {
  type ProxyPushStatus,
  PUSH_METRICS,
  type PushMetric,
  PushStatus,
  type PushStatusReporter,
} from "./push-status.ts";
export type { ServiceIndex } from "./service-index.ts";
export type { EgressListener } from "./sidecar-egress.ts";
export {
  DEFAULT_SIDECAR_NAME,
  type OutboundTrafficPolicy,
  SidecarScope,
  type TrafficDirection,
} from "./sidecar-scope.ts";
export { translateWasmPlugin, WASM_PLUGIN_NAME_SUFFIX } from "./traffic-extensions.ts";
export { usesGatewaySemantics, type VirtualServiceIndex } from "./virtual-service-index.ts";
export type { PolicyWorkload, WorkloadPolicyIndex } from "./workload-policies.ts";
