// What the cluster builders are given: plain inputs chosen by the caller (the push context), never
// the push context itself, so each builder is a pure function of what it is passed.
import type { MeshConfig } from "../../config/index.ts";
import type { DestinationRuleSpec } from "../../config/types/index.ts";
import type { ProxyNode, PushStatusReporter } from "../../model/index.ts";
import type { Service, ServiceEndpoint, ServicePort } from "../../registry/index.ts";
import type { Memos } from "../../util/index.ts";
import type { IstioTlsContextCache } from "./tls.ts";

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
   * The endpoints of this service port (as the registry's endpointsFor gives them). DNS clusters carry
   * them inline; their identities join the service's as Istio mTLS SANs; passthrough traffic gets
   * auto-mTLS only when there are some and none has mTLS disabled.
   */
  endpoints: readonly ServiceEndpoint[];
  /**
   * The namespace/mesh PeerAuthentication mode for the service (the rest of Istio's
   * BestEffortInferServiceMTLSMode is done here); PERMISSIVE, Istio's default, when not given.
   */
  serviceMtlsMode?: ServiceMtlsMode;
  /** PILOT_ENABLE_REDIS_FILTER: redis ports are served by redis_proxy, so their clusters are MAGLEV. */
  redisFilter?: boolean;
  /** The encoded Istio mTLS contexts shared by clusters (the caller keeps one for all its clusters). */
  istioTlsContexts?: IstioTlsContextCache;
  /** Where a DNS cluster left out for having no endpoints is reported (pilot_dns_cluster_without_endpoints). */
  report?: PushStatusReporter;
  /** Where the builders keep what they memoise (the xDS cache's tables); without it nothing is kept. */
  memos?: Memos;
}
