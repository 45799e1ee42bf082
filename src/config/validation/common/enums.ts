// Proto enums as Istio's decoder reads them: by name, or by number (the CRD schema allows only names).
import type { Findings } from "../findings.ts";
import { goQuote } from "./format.ts";

export interface EnumType {
  /** Full proto name, as the decoder's error message prints it. */
  fullName: string;
  /** Value names indexed by their number. */
  values: readonly string[];
}

export function enumType(fullName: string, values: readonly string[]): EnumType {
  return { fullName, values };
}

const NET = "istio.networking.v1alpha3";
export const H2_UPGRADE_POLICY = enumType(`${NET}.ConnectionPoolSettings.HTTPSettings.H2UpgradePolicy`, [
  "DEFAULT",
  "DO_NOT_UPGRADE",
  "UPGRADE",
]);
export const SIMPLE_LB = enumType(`${NET}.LoadBalancerSettings.SimpleLB`, [
  "UNSPECIFIED",
  "LEAST_CONN",
  "RANDOM",
  "PASSTHROUGH",
  "ROUND_ROBIN",
  "LEAST_REQUEST",
]);
export const CLIENT_TLS_MODE = enumType(`${NET}.ClientTLSSettings.TLSmode`, [
  "DISABLE",
  "SIMPLE",
  "MUTUAL",
  "ISTIO_MUTUAL",
]);
export const PROXY_PROTOCOL_VERSION = enumType(`${NET}.TrafficPolicy.ProxyProtocol.VERSION`, ["V1", "V2"]);
export const SERVER_TLS_MODE = enumType(`${NET}.ServerTLSSettings.TLSmode`, [
  "PASSTHROUGH",
  "SIMPLE",
  "MUTUAL",
  "AUTO_PASSTHROUGH",
  "ISTIO_MUTUAL",
  "OPTIONAL_MUTUAL",
]);
export const TLS_PROTOCOL = enumType(`${NET}.ServerTLSSettings.TLSProtocol`, [
  "TLS_AUTO",
  "TLSV1_0",
  "TLSV1_1",
  "TLSV1_2",
  "TLSV1_3",
]);
export const SERVICE_ENTRY_LOCATION = enumType(`${NET}.ServiceEntry.Location`, ["MESH_EXTERNAL", "MESH_INTERNAL"]);
export const SERVICE_ENTRY_RESOLUTION = enumType(`${NET}.ServiceEntry.Resolution`, [
  "NONE",
  "STATIC",
  "DNS",
  "DNS_ROUND_ROBIN",
  "DYNAMIC_DNS",
]);
export const CAPTURE_MODE = enumType(`${NET}.CaptureMode`, ["DEFAULT", "IPTABLES", "NONE"]);
export const CORS_UNMATCHED_PREFLIGHTS = enumType(`${NET}.CorsPolicy.UnmatchedPreflights`, [
  "UNSPECIFIED",
  "FORWARD",
  "IGNORE",
]);
export const HTTP_REDIRECT_PORT_SELECTION = enumType(`${NET}.HTTPRedirect.RedirectPortSelection`, [
  "FROM_PROTOCOL_DEFAULT",
  "FROM_REQUEST_PORT",
]);
export const OUTBOUND_TRAFFIC_POLICY_MODE = enumType(`${NET}.OutboundTrafficPolicy.Mode`, [
  "REGISTRY_ONLY",
  "ALLOW_ANY",
]);

/**
 * Reads an enum field. Absent reads as the zero value's name; a number outside the known values
 * reads as its decimal string (Go prints unknown enum numbers that way). A value the decoder
 * rejects is reported as Istio's `unknown value ... for enum ...` and reads as undefined.
 */
export function readEnum(value: unknown, type: EnumType, out: Findings): string | undefined {
  if (value === undefined || value === null) return type.values[0];
  if (typeof value === "string" && type.values.includes(value)) return value;
  if (typeof value === "number" && Number.isInteger(value)) return type.values[value] ?? String(value);
  out.error(`unknown value ${goQuote(JSON.stringify(value))} for enum ${type.fullName}`);
  return undefined;
}
