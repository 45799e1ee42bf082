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
}

export function assembleClusters(input: ProxyClusters): cluster.Cluster[] {
  const { proxy, mesh } = input;
  const ordered =
    proxy.type === "sidecar"
      ? [
          ...input.outbound,
          buildBlackHoleCluster(mesh),
          buildPassthroughCluster(mesh),
          ...(input.allowAnyDynamicDns ? [buildAllowAnyDynamicDnsCluster(mesh, proxy)] : []),
          ...(input.inbound ?? []),
          buildInboundPassthroughCluster(mesh, proxy),
        ]
      : [...input.outbound, buildBlackHoleCluster(mesh), ...(input.sniDnat ?? [])];
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
