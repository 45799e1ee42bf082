// What Istio's decoder needs of the policy kinds (security, telemetry, extensions) beyond
// common/enums.ts: their enum types, and uint32 map keys (PeerAuthentication ports).
import { enumType } from "./common/enums.ts";
import { goQuote } from "./common/format.ts";
import type { Findings } from "./findings.ts";

export const AUTHORIZATION_ACTION = enumType("istio.security.v1beta1.AuthorizationPolicy.Action", [
  "ALLOW",
  "DENY",
  "AUDIT",
  "CUSTOM",
]);
export const MUTUAL_TLS_MODE = enumType("istio.security.v1beta1.PeerAuthentication.MutualTLS.Mode", [
  "UNSET",
  "DISABLE",
  "PERMISSIVE",
  "STRICT",
]);
export const JWT_PRESENCE = enumType("istio.security.v1beta1.JWTRule.Presence", ["OPTIONAL", "REQUIRED"]);
export const TELEMETRY_WORKLOAD_MODE = enumType("istio.telemetry.v1alpha1.WorkloadMode", [
  "CLIENT_AND_SERVER",
  "CLIENT",
  "SERVER",
]);
export const ISTIO_METRIC = enumType("istio.telemetry.v1alpha1.MetricSelector.IstioMetric", [
  "ALL_METRICS",
  "REQUEST_COUNT",
  "REQUEST_DURATION",
  "REQUEST_SIZE",
  "RESPONSE_SIZE",
  "TCP_OPENED_CONNECTIONS",
  "TCP_CLOSED_CONNECTIONS",
  "TCP_SENT_BYTES",
  "TCP_RECEIVED_BYTES",
  "GRPC_REQUEST_MESSAGES",
  "GRPC_RESPONSE_MESSAGES",
]);
export const TAG_OPERATION = enumType("istio.telemetry.v1alpha1.MetricsOverrides.TagOverride.Operation", [
  "UPSERT",
  "REMOVE",
]);
export const WASM_PLUGIN_TYPE = enumType("istio.extensions.v1alpha1.PluginType", [
  "UNSPECIFIED_PLUGIN_TYPE",
  "HTTP",
  "NETWORK",
]);
export const WASM_PLUGIN_PHASE = enumType("istio.extensions.v1alpha1.PluginPhase", [
  "UNSPECIFIED_PHASE",
  "AUTHN",
  "AUTHZ",
  "STATS",
]);
export const EXECUTION_PHASE = enumType("istio.extensions.v1alpha1.TrafficExtension.ExecutionPhase", [
  "UNSPECIFIED",
  "AUTHN",
  "AUTHZ",
  "STATS",
]);
export const WASM_PULL_POLICY = enumType("istio.extensions.v1alpha1.PullPolicy", [
  "UNSPECIFIED_POLICY",
  "IfNotPresent",
  "Always",
]);
export const WASM_FAIL_STRATEGY = enumType("istio.extensions.v1alpha1.FailStrategy", [
  "FAIL_CLOSE",
  "FAIL_OPEN",
  "FAIL_RELOAD",
]);
export const ENV_VALUE_SOURCE = enumType("istio.extensions.v1alpha1.EnvValueSource", ["INLINE", "HOST"]);
export const SELECTOR_WORKLOAD_MODE = enumType("istio.type.v1beta1.WorkloadMode", [
  "UNDEFINED",
  "CLIENT",
  "SERVER",
  "CLIENT_AND_SERVER",
]);

/** A map key that must decode as a uint32 (PeerAuthentication port keys); reported when it does not. */
export function decodeUint32Key(key: string, out: Findings): number | undefined {
  if (/^[0-9]+$/.test(key) && Number(key) <= 0xffffffff) return Number(key);
  out.error(`invalid map key ${goQuote(key)}: expected a uint32`);
  return undefined;
}
