// The EnvoyFilter patch engine: the patches a proxy gets (patch-set.ts), applied last to the
// generated listeners, route configurations, clusters and extension configs, each patched resource
// checked against Envoy's constraints (guard.ts), with Istio's pilot_envoy_filter_status (status.ts).
export { applyClusterPatches, insertedClusters } from "./cluster.ts";
export { applyBootstrapPatches, insertedExtensionConfigs } from "./extension.ts";
export {
  patchGeneratedClusters,
  patchGeneratedListeners,
  patchGeneratedRouteConfiguration,
} from "./generated.ts";
export { applyListenerPatches } from "./listener.ts";
export {
  type ApplyTo,
  compileEnvoyFilter,
  type Operation,
  type Patch,
  type PatchContext,
  type PatchError,
  PatchSet,
  patchSetFor,
} from "./patch-set.ts";
export { applyRouteConfigurationPatches, type GatewayPortMap } from "./route.ts";
export { envoyFilterStatus, registerEnvoyFilterMetrics } from "./status.ts";
