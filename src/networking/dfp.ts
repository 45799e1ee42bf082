// Istio's dynamic forward proxy for DYNAMIC_DNS ServiceEntries with a wildcard host: the proxy resolves
// the name it is asked for (Host or SNI) itself. The cluster, the HTTP filter and the SNI network filter
// of a service name one DNS cache, `<host>_dfp_dns_cache`, with one lookup family: Envoy shares caches
// by name and rejects two configurations under one name.
import { create } from "@bufbuild/protobuf";
import { caresDns, core, dfpCommon, packAny } from "../api/index.ts";
import type { ProxyNode } from "../model/index.ts";
import type { Service } from "../registry/index.ts";
import { CARES_DNS_RESOLVER, dnsLookupFamily } from "./cluster/dns.ts";

export const DFP_CLUSTER_TYPE = "envoy.clusters.dynamic_forward_proxy";
export const SNI_DFP_NETWORK_FILTER = "envoy.filters.network.sni_dynamic_forward_proxy";
/** The one DNS cache of MeshConfig outboundTrafficPolicy ALLOW_ANY_DYNAMIC_DNS. */
export const ALLOW_ANY_DNS_CACHE = "allow_any_dfp_dns_cache";
/** PILOT_ALLOW_ANY_DYNAMIC_DNS_MAX_HOSTS' default (Envoy's own, made visible). */
const ALLOW_ANY_MAX_HOSTS = 1024;
const DEFAULT_DNS_PROXY = { host: "127.0.0.1", port: 15053 };

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

/**
 * The ALLOW_ANY_DYNAMIC_DNS cache (Istio's buildAllowAnyDynamicDNSDNSCacheConfig): looked up in the
 * family of the node's INSTANCE_IPS; with DNS capture, resolved through the agent's DNS proxy.
 */
export function allowAnyDnsCache(proxy: ProxyNode): dfpCommon.DnsCacheConfig {
  const cache = create(dfpCommon.DnsCacheConfigSchema, {
    name: ALLOW_ANY_DNS_CACHE,
    maxHosts: ALLOW_ANY_MAX_HOSTS,
    dnsLookupFamily: dnsLookupFamily(proxy.metadata.INSTANCE_IPS ?? []),
  });
  if (proxy.metadata.DNS_CAPTURE !== true) return cache;
  const { host, port } = dnsProxyAddress(proxy.metadata.DNS_PROXY_ADDR ?? "");
  cache.typedDnsResolverConfig = create(core.TypedExtensionConfigSchema, {
    name: CARES_DNS_RESOLVER,
    typedConfig: packAny(
      caresDns.CaresDnsResolverConfigSchema,
      create(caresDns.CaresDnsResolverConfigSchema, {
        resolvers: [
          {
            address: {
              case: "socketAddress",
              value: { address: host, portSpecifier: { case: "portValue", value: port } },
            },
          },
        ],
      }),
    ),
  });
  return cache;
}

/** DNS_PROXY_ADDR as host and port: localhost is 127.0.0.1; what does not parse is the default 127.0.0.1:15053. */
function dnsProxyAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(":");
  if (colon < 0) return DEFAULT_DNS_PROXY;
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  const port = Number(address.slice(colon + 1));
  return {
    host: host === "localhost" ? "127.0.0.1" : host,
    port: Number.isInteger(port) && port >= 0 ? port : DEFAULT_DNS_PROXY.port,
  };
}
