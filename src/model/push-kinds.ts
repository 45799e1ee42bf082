// The kinds a push indexes, as config store kind keys ("group/Kind").
import { kindKey } from "../config/index.ts";

const NET = "networking.istio.io";
const SEC = "security.istio.io";
export const PUSH_KINDS = {
  virtualService: kindKey(NET, "VirtualService"),
  destinationRule: kindKey(NET, "DestinationRule"),
  gateway: kindKey(NET, "Gateway"),
  sidecar: kindKey(NET, "Sidecar"),
  envoyFilter: kindKey(NET, "EnvoyFilter"),
  peerAuthentication: kindKey(SEC, "PeerAuthentication"),
  requestAuthentication: kindKey(SEC, "RequestAuthentication"),
  authorizationPolicy: kindKey(SEC, "AuthorizationPolicy"),
  telemetry: kindKey("telemetry.istio.io", "Telemetry"),
  wasmPlugin: kindKey("extensions.istio.io", "WasmPlugin"),
  trafficExtension: kindKey("extensions.istio.io", "TrafficExtension"),
} as const;

export type PushKind = keyof typeof PUSH_KINDS;

/** Where services come from: Kubernetes Services and ServiceEntries. */
export const SERVICE_KINDS = {
  Kubernetes: kindKey("", "Service"),
  External: kindKey(NET, "ServiceEntry"),
} as const;

/**
 * The kind an ambient address (a WDS resource name) is named by in a push's configsUpdated (Istio's
 * kind.Address): no config object has it; only ztunnel and waypoints read it.
 */
export const ADDRESS_KIND = kindKey("ambient.istio.io", "Address");
