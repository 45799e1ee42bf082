// The EnvoyFilter patch engine: the patches a proxy gets (patch.ts, patch-set.ts), applied last to the
// generated listeners, route configurations and clusters (generated.ts, in Istio's contexts), each
// patched resource checked against Envoy's constraints (guard.ts), with Istio's
// pilot_envoy_filter_status (status.ts). Extension configs and the bootstrap are for ECDS and the agent.
export { applyBootstrapPatches, insertedExtensionConfigs } from "./extension.ts";
export {
  patchGeneratedClusters,
  patchGeneratedListeners,
  patchGeneratedRouteConfiguration,
  patchWaypointClusters,
  patchWaypointDefaultRoute,
  patchWaypointListeners,
} from "./generated.ts";
export type { ApplyTo, Operation, Patch, PatchContext, PatchError } from "./patch.ts";
export { type PatchSet, patchSetFor } from "./patch-set.ts";
export type { GatewayPortMap } from "./route.ts";
export { describePatchError, envoyFilterStatus, registerEnvoyFilterMetrics } from "./status.ts";
