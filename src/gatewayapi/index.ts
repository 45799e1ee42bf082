// Gateway API → Istio config and statuses. The public face of src/gatewayapi:
// convertResources(objects, settings, services) → { config, statuses }.
export { stampTransitionTimes, TRANSITION_TIME } from "./conditions.ts";
export { type ConversionResult, convertResources, ROUTE_KINDS } from "./convert.ts";
export {
  EASTWEST_CONTROLLER,
  GATEWAY_CONTROLLER,
  GatewayClassIndex,
  MESH_CONTROLLER,
  type ResolvedClass,
  UNMANAGED_CONTROLLER,
} from "./gatewayclass.ts";
export { INFERENCE_POOL_LABEL, inferencePoolServiceName, shadowService } from "./inference-service.ts";
export { hasGatewayParent } from "./inferencepool.ts";
export type { Listener } from "./listeners.ts";
export { acceptedListenerSetListeners } from "./listenerset.ts";
export {
  type ClusterCollections,
  GATEWAY_API_SOURCE,
  type GatewayApiCollections,
  type LiveConversionInputs,
  liveConversion,
  registryServiceView,
} from "./live.ts";
export type { ConversionSettings, GatewayApiFeatures, RegistryService, ServiceLookup } from "./model.ts";
export { DEFAULT_SETTINGS, GATEWAY_GROUP, GATEWAY_X_GROUP, staticServiceLookup } from "./model.ts";
export { GatewayStatusWriter, type StatusTarget, type StatusWriterOptions } from "./status-writer.ts";
