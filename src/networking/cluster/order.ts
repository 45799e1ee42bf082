// The order of a proxy's CDS response (Istio's buildClusters): outbound clusters, then BlackHoleCluster
// and PassthroughCluster (and AllowAnyDynamicDNSCluster), then inbound clusters and InboundPassthroughCluster for sidecars; outbound,
// BlackHoleCluster and SNI-DNAT clusters for gateways. A name seen twice keeps its first cluster.
import type { cluster } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { ProxyNode } from "../../model/proxy.ts";
import type { PushStatusReporter } from "../../model/push-status.ts";
import {
  buildAllowAnyDynamicDnsCluster,
  buildBlackHoleCluster,
  buildInboundPassthroughCluster,
  buildPassthroughCluster,
} from "./special.ts";

export interface ProxyClusters {
  proxy: ProxyNode;
  mesh: MeshConfig;
  /** Outbound clusters in service order (each service's ports, default cluster before its subsets). */
  outbound: readonly cluster.Cluster[];
  /** Sidecars: inbound clusters. */
  inbound?: readonly cluster.Cluster[];
  /** Gateways with an AUTO_PASSTHROUGH server: SNI-DNAT clusters. */
  sniDnat?: readonly cluster.Cluster[];
  /** Sidecars under outboundTrafficPolicy ALLOW_ANY_DYNAMIC_DNS: AllowAnyDynamicDNSCluster after PassthroughCluster. */
  allowAnyDynamicDns?: boolean;
  /** Where a cluster dropped for a name seen before is reported (pilot_duplicate_envoy_clusters). */
  report?: PushStatusReporter;
  /** The special clusters, when the caller shares them between proxies (else built here). */
  special?: SpecialClusters;
}

/** The clusters every proxy of a kind gets besides its services': in CDS order, around the inbound ones. */
export interface SpecialClusters {
  /** BlackHoleCluster, then for sidecars PassthroughCluster and AllowAnyDynamicDNSCluster (if wanted). */
  beforeInbound: readonly cluster.Cluster[];
  /** Sidecars: InboundPassthroughCluster. */
  afterInbound: readonly cluster.Cluster[];
}

/** The special clusters of the proxy: they read its type and IP families (INSTANCE_IPS for AllowAnyDynamicDNS). */
export function buildSpecialClusters(
  input: Pick<ProxyClusters, "proxy" | "mesh" | "allowAnyDynamicDns">,
): SpecialClusters {
  const { proxy, mesh } = input;
  if (proxy.type !== "sidecar") return { beforeInbound: [buildBlackHoleCluster(mesh)], afterInbound: [] };
  return {
    beforeInbound: [
      buildBlackHoleCluster(mesh),
      buildPassthroughCluster(mesh),
      ...(input.allowAnyDynamicDns ? [buildAllowAnyDynamicDnsCluster(mesh, proxy)] : []),
    ],
    afterInbound: [buildInboundPassthroughCluster(mesh, proxy)],
  };
}

export function assembleClusters(input: ProxyClusters): cluster.Cluster[] {
  const special = input.special ?? buildSpecialClusters(input);
  const ordered =
    input.proxy.type === "sidecar"
      ? [...input.outbound, ...special.beforeInbound, ...(input.inbound ?? []), ...special.afterInbound]
      : [...input.outbound, ...special.beforeInbound, ...(input.sniDnat ?? [])];
  const seen = new Set<string>();
  return ordered.filter((c) => {
    if (seen.has(c.name)) {
      input.report?.("pilot_duplicate_envoy_clusters", c.name, `Duplicate cluster ${c.name} found while pushing CDS`);
      return false;
    }
    seen.add(c.name);
    return true;
  });
}
