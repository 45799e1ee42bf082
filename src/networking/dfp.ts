// Istio's dynamic forward proxy for DYNAMIC_DNS ServiceEntries with a wildcard host: the proxy resolves
// the name it is asked for (Host or SNI) itself. The cluster, the HTTP filter and the SNI network filter
// of a service name one DNS cache, `<host>_dfp_dns_cache`, with one lookup family: Envoy shares caches
// by name and rejects two configurations under one name.
import { create } from "@bufbuild/protobuf";
import { dfpCommon } from "../api/index.ts";
import type { Service } from "../registry/index.ts";
import { dnsLookupFamily } from "./cluster/dns.ts";

export const DFP_CLUSTER_TYPE = "envoy.clusters.dynamic_forward_proxy";
export const SNI_DFP_NETWORK_FILTER = "envoy.filters.network.sni_dynamic_forward_proxy";

/** Whether the service's clusters and listeners go through the dynamic forward proxy. */
export function isDynamicForwardProxy(service: Pick<Service, "hostname" | "resolution">): boolean {
  return service.resolution === "DynamicDNS" && service.hostname.startsWith("*");
}

/** The service's DNS cache (Istio's BuildDNSCacheName), looked up in the proxy's address family. */
export function forwardProxyDnsCache(hostname: string, proxyIps: readonly string[]): dfpCommon.DnsCacheConfig {
  return create(dfpCommon.DnsCacheConfigSchema, {
    name: `${hostname}_dfp_dns_cache`,
    dnsLookupFamily: dnsLookupFamily(proxyIps),
  });
}
