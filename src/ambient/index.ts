// Ambient mode's control plane (Istio's ambient index, pilot/pkg/serviceregistry/ambient): what ztunnel
// is sent over WDS (workloads, services, and the `Authorization` policies it enforces) and what
// waypoints are, computed from Pods, Services, ServiceEntries, WorkloadEntries, Namespaces, Gateways
// and security policies as krt collections.
export { AmbientIndex, type AmbientInputs, type AmbientOptions } from "./ambient-index.ts";
export {
  type AmbientAuthorizationOptions,
  type AuthorizationPolicyConversion,
  convertAuthorizationPolicy,
  convertPeerAuthentication,
  peerAuthenticationPolicyKeys,
  peerAuthenticationPolicyName,
  STATIC_STRICT_POLICY_NAME,
  staticStrictPolicy,
} from "./authorization.ts";
export { type IpBlockBytes, ipAddressBytes, ipBlockBytes, ipPrefixBytes } from "./ip-bytes.ts";
export {
  type AddressInfo,
  ipString,
  type PolicyInfo,
  type ServiceInfo,
  type StatusMessage,
  type WorkloadInfo,
} from "./model.ts";
export {
  type Condition,
  type StatusReport,
  type StatusReporter,
  type StatusTarget,
  VISIBILITY_APPLIED,
  WAYPOINT_ACCEPTED,
  WAYPOINT_BOUND,
  WAYPOINT_MISSING,
  ZTUNNEL_ACCEPTED,
} from "./status.ts";
export { type WaypointKey, waypointKeyIndexKeys } from "./waypoints.ts";
