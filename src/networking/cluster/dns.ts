// DNS settings of STRICT_DNS and LOGICAL_DNS clusters (Istio's ClusterBuilder.buildCluster): lookup
// family from the proxy's addresses, the mesh refresh rate, DNS TTLs respected, and the c-ares resolver
// with Istio's 100 UDP queries per resolver (PILOT_DNS_CARES_UDP_MAX_QUERIES). The c-ares config proto
// is not among Sluice's generated bindings, so it goes as a TypedStruct.
import { isIP } from "node:net";
import { create } from "@bufbuild/protobuf";
import { cluster, core, packAny, xdsType } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import { durationFromSeconds, toDuration } from "../duration.ts";
import { typedStruct } from "../httpfilter/index.ts";

export const CARES_DNS_RESOLVER = "envoy.network.dns_resolver.cares";
export const CARES_CONFIG_TYPE_URL =
  "type.googleapis.com/envoy.extensions.network.dns_resolver.cares.v3.CaresDnsResolverConfig";
const CARES_UDP_MAX_QUERIES = 100;

export function applyDnsSettings(draft: cluster.Cluster, proxyIps: readonly string[], mesh: MeshConfig): void {
  draft.dnsLookupFamily = dnsLookupFamily(proxyIps);
  draft.dnsRefreshRate = toDuration(mesh.dnsRefreshRate) ?? durationFromSeconds(60);
  draft.respectDnsTtl = true;
  draft.typedDnsResolverConfig = create(core.TypedExtensionConfigSchema, {
    name: CARES_DNS_RESOLVER,
    typedConfig: packAny(
      xdsType.TypedStructSchema,
      typedStruct(CARES_CONFIG_TYPE_URL, { udp_max_queries: CARES_UDP_MAX_QUERIES }),
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
