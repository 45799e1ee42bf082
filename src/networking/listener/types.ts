// Inputs shared by the listener builders: the proxy being served and the mesh settings.
import type { ConfigObject, MeshConfig, ProxyConfig } from "../../config/index.ts";
import type { TrafficExtension, VirtualServiceSpec } from "../../config/types/index.ts";
import type { ProxyNode, PushStatusReporter } from "../../model/index.ts";
import { type Memos, NO_MEMOS } from "../../util/index.ts";
import type { ProxyTelemetry } from "../telemetry/types.ts";
import type { ProtocolFilters } from "./protocol-filters.ts";

/** How traffic reaches the sidecar (node metadata INTERCEPTION_MODE; REDIRECT when absent). */
export type InterceptionMode = "REDIRECT" | "TPROXY" | "NONE";

/** The effective PeerAuthentication mode of an inbound port. */
export type MtlsMode = "STRICT" | "PERMISSIVE" | "DISABLE";

/** The proxy and mesh every builder reads. */
export interface ListenerEnv {
  proxy: ProxyNode;
  mesh: MeshConfig;
  /** PILOT_ENABLE_PERSISTENT_SESSION_FILTER (Istio's default: off). */
  persistentSessions?: boolean;
  /** Which protocol filters mongo/redis/mysql TCP chains get (default: Istio's, mongo only). */
  protocolFilters?: ProtocolFilters;
  /** The Telemetry API's access logs, tracing and stats for the proxy; absent: the mesh's legacy settings. */
  telemetry?: ProxyTelemetry;
  /** TrafficExtensions attached to the proxy (WasmPlugins translated), highest priority first. */
  extensions?: readonly TrafficExtension[];
  /** Where listener conflicts go (the push's status, Istio's pilot_conflict_* metrics). */
  report?: PushStatusReporter;
  /** Where the builders keep what they memoise (the xDS cache's tables); without it nothing is kept. */
  memos?: Memos;
}

/** The env's memos, or NO_MEMOS (nothing kept) without any. */
export function envMemos(env: Pick<ListenerEnv, "memos">): Memos {
  return env.memos ?? NO_MEMOS;
}

export function interceptionMode(proxy: ProxyNode): InterceptionMode {
  const mode = proxy.metadata.INTERCEPTION_MODE;
  return mode === "TPROXY" || mode === "NONE" ? mode : "REDIRECT";
}

/** A VirtualService as the config store holds it. */
export type VirtualService = ConfigObject<VirtualServiceSpec>;

/** The name and namespace a VirtualService is known by (stat prefixes, config metadata, short hosts). */
export function vsRef(vs: VirtualService): { name: string; namespace: string } {
  return { name: vs.metadata.name ?? "", namespace: vs.metadata.namespace ?? "" };
}

/** The gateway topology of the proxy's ProxyConfig: node PROXY_CONFIG over the mesh defaultConfig. */
export function gatewayTopology(env: ListenerEnv): NonNullable<ProxyConfig["gatewayTopology"]> {
  const fromNode = env.proxy.metadata.PROXY_CONFIG?.gatewayTopology as ProxyConfig["gatewayTopology"];
  return fromNode ?? env.mesh.defaultConfig?.gatewayTopology ?? {};
}
