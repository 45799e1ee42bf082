// The order of a proxy's CDS response (Istio's buildClusters): outbound clusters, then BlackHoleCluster
// and PassthroughCluster (and AllowAnyDynamicDNSCluster), then inbound clusters and InboundPassthroughCluster for sidecars; outbound,
// BlackHoleCluster and SNI-DNAT clusters for gateways. A name seen twice keeps its first cluster.
import type { cluster } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { ProxyNode, PushStatusReporter } from "../../model/index.ts";
import { type Memos, NO_MEMOS, weakTable } from "../../util/index.ts";
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
  /** Where the builders keep what they memoise (the xDS cache's tables); without it nothing is kept. */
  memos?: Memos;
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
  input: Pick<ProxyClusters, "proxy" | "mesh" | "allowAnyDynamicDns" | "memos">,
): SpecialClusters {
  const { proxy, mesh } = input;
  const memos = input.memos ?? NO_MEMOS;
  if (proxy.type !== "sidecar") return { beforeInbound: [buildBlackHoleCluster(memos, mesh)], afterInbound: [] };
  return {
    beforeInbound: [
      buildBlackHoleCluster(memos, mesh),
      buildPassthroughCluster(memos, mesh),
      ...(input.allowAnyDynamicDns ? [buildAllowAnyDynamicDnsCluster(memos, mesh, proxy)] : []),
    ],
    afterInbound: [buildInboundPassthroughCluster(memos, mesh, proxy)],
  };
}

export function assembleClusters(input: ProxyClusters): cluster.Cluster[] {
  const special = input.special ?? buildSpecialClusters(input);
  const rest =
    input.proxy.type === "sidecar"
      ? [special.beforeInbound, input.inbound ?? [], special.afterInbound]
      : [special.beforeInbound, input.sniDnat ?? []];
  const outbound = uniqueOutbound(input.memos ?? NO_MEMOS, input.outbound);
  for (const name of outbound.duplicates) reportDuplicate(input, name);
  const clusters = [...outbound.clusters];
  const seen = new Set<string>();
  for (const part of rest) {
    for (const c of part) {
      if (outbound.names.has(c.name) || seen.has(c.name)) {
        reportDuplicate(input, c.name);
        continue;
      }
      seen.add(c.name);
      clusters.push(c);
    }
  }
  return clusters;
}

function reportDuplicate(input: ProxyClusters, name: string): void {
  input.report?.("pilot_duplicate_envoy_clusters", name, `Duplicate cluster ${name} found while pushing CDS`);
}

interface UniqueClusters {
  clusters: readonly cluster.Cluster[];
  names: ReadonlySet<string>;
  /** The names dropped, in order. */
  duplicates: readonly string[];
}

// An outbound list is shared by the proxies of a class and never changed: it is de-duplicated once.
const UNIQUE_OUTBOUNDS = weakTable<readonly cluster.Cluster[], UniqueClusters>("cluster/uniqueOutbounds");

function uniqueOutbound(memos: Memos, outbound: readonly cluster.Cluster[]): UniqueClusters {
  const uniqueOutbounds = memos.weak(UNIQUE_OUTBOUNDS);
  let unique = uniqueOutbounds.get(outbound);
  if (!unique) {
    const names = new Set<string>();
    const clusters: cluster.Cluster[] = [];
    const duplicates: string[] = [];
    for (const c of outbound) {
      if (names.has(c.name)) {
        duplicates.push(c.name);
        continue;
      }
      names.add(c.name);
      clusters.push(c);
    }
    unique = { clusters, names, duplicates };
    uniqueOutbounds.set(outbound, unique);
  }
  return unique;
}
