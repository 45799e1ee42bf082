// Inputs shared by the listener builders: the proxy being served and the mesh settings.
import type { MeshConfig } from "../../config/index.ts";
import type { VirtualServiceSpec } from "../../config/types/index.ts";
import type { ProxyNode } from "../../model/proxy.ts";

/** How traffic reaches the sidecar (node metadata INTERCEPTION_MODE; REDIRECT when absent). */
export type InterceptionMode = "REDIRECT" | "TPROXY" | "NONE";

/** The effective PeerAuthentication mode of an inbound port. */
export type MtlsMode = "STRICT" | "PERMISSIVE" | "DISABLE";

/** The proxy and mesh every builder reads. */
export interface ListenerEnv {
  proxy: ProxyNode;
  mesh: MeshConfig;
}

export function interceptionMode(proxy: ProxyNode): InterceptionMode {
  const mode = proxy.metadata.INTERCEPTION_MODE;
  return mode === "TPROXY" || mode === "NONE" ? mode : "REDIRECT";
}

/** A VirtualService bound to the proxy's gateway (`mesh` for sidecars): its tcp and tls blocks route TCP. */
export interface OutboundVirtualService {
  name: string;
  namespace: string;
  spec: VirtualServiceSpec;
}
