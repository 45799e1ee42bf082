// DNS settings of STRICT_DNS and LOGICAL_DNS clusters (Istio's ClusterBuilder.buildCluster): lookup
// family from the proxy's addresses, the mesh refresh rate, DNS TTLs respected, and the c-ares resolver
// with Istio's 100 UDP queries per resolver (PILOT_DNS_CARES_UDP_MAX_QUERIES).
import { isIP } from "node:net";
import { create } from "@bufbuild/protobuf";
import { caresDns, cluster, core, packAny } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import { durationFromSeconds, toDuration } from "../duration.ts";

export const CARES_DNS_RESOLVER = "envoy.network.dns_resolver.cares";
const CARES_UDP_MAX_QUERIES = 100;

export function applyDnsSettings(draft: cluster.Cluster, proxyIps: readonly string[], mesh: MeshConfig): void {
  draft.dnsLookupFamily = dnsLookupFamily(proxyIps);
  draft.dnsRefreshRate = toDuration(mesh.dnsRefreshRate) ?? durationFromSeconds(60);
  draft.respectDnsTtl = true;
  draft.typedDnsResolverConfig = create(core.TypedExtensionConfigSchema, {
    name: CARES_DNS_RESOLVER,
    typedConfig: packAny(
      caresDns.CaresDnsResolverConfigSchema,
      create(caresDns.CaresDnsResolverConfigSchema, { udpMaxQueries: CARES_UDP_MAX_QUERIES }),
    ),
  });
}

/**
 * V6_ONLY for IPv6-only proxies, V4_ONLY otherwise: Istio uses ALL for dual-stack proxies only with
 * ISTIO_DUAL_STACK, which is off by default.
 */
export function dnsLookupFamily(ips: readonly string[]): cluster.Cluster_DnsLookupFamily {
  if (ips.length > 0 && ips.every((ip) => isIP(ip) === 6)) return cluster.Cluster_DnsLookupFamily.V6_ONLY;
  return cluster.Cluster_DnsLookupFamily.V4_ONLY;
}
