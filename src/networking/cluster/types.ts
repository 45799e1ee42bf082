// What the cluster builders are given: plain inputs chosen by the caller (the push context), never
// the push context itself, so each builder is a pure function of what it is passed.
import type { MeshConfig } from "../../config/index.ts";
import type { DestinationRuleSpec } from "../../config/types/index.ts";
import type { ProxyNode } from "../../model/proxy.ts";
import type { Service, ServiceEndpoint, ServicePort } from "../../registry/index.ts";

/** The DestinationRule that applies to a host for this proxy, already chosen and merged by the caller. */
export interface AppliedDestinationRule {
  name: string;
  namespace: string;
  spec: DestinationRuleSpec;
}

/** The PeerAuthentication mode of a service's workloads (Istio's MutualTLSMode); auto-mTLS skips DISABLE and UNKNOWN. */
export type ServiceMtlsMode = "STRICT" | "PERMISSIVE" | "DISABLE" | "UNKNOWN";

export interface OutboundClusterInput {
  service: Service;
  port: ServicePort;
  /** The DestinationRule for the service's host, if any. */
  destinationRule?: AppliedDestinationRule;
  proxy: ProxyNode;
  mesh: MeshConfig;
  /**
   * The endpoints of this service port. DNS clusters carry them inline; a headless service gets
   * auto-mTLS only when every one of them has a sidecar. EDS clusters do not read them.
   */
  endpoints: readonly ServiceEndpoint[];
  /** The mTLS mode of the service's workloads; PERMISSIVE (Istio's default) when not given. */
  serviceMtlsMode?: ServiceMtlsMode;
}
