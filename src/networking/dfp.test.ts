// The dynamic forward proxy DNS caches: one per DYNAMIC_DNS wildcard host, and the ALLOW_ANY_DYNAMIC_DNS one.
import assert from "node:assert/strict";
import { test } from "node:test";
import { makeProxy } from "../../test/support/cluster-fixtures.ts";
import { caresDns, cluster, unpackAny } from "../api/index.ts";
import type { ProxyNode } from "../model/proxy.ts";
import { allowAnyDnsCache, forwardProxyDnsCache, isDynamicForwardProxy } from "./dfp.ts";

function proxyWith(metadata: Partial<ProxyNode["metadata"]>): ProxyNode {
  const proxy = makeProxy();
  return { ...proxy, metadata: { ...proxy.metadata, ...metadata } };
}

test("only DYNAMIC_DNS services with a wildcard host use the forward proxy", () => {
  assert.equal(isDynamicForwardProxy({ hostname: "*.example.com", resolution: "DynamicDNS" }), true);
  assert.equal(isDynamicForwardProxy({ hostname: "api.example.com", resolution: "DynamicDNS" }), false);
  assert.equal(isDynamicForwardProxy({ hostname: "*.example.com", resolution: "DNSLB" }), false);
});

test("a host's cache is named after it and looks up the proxy's family", () => {
  const cache = forwardProxyDnsCache("*.example.com", ["fd00::1"]);
  assert.equal(cache.name, "*.example.com_dfp_dns_cache");
  assert.equal(cache.dnsLookupFamily, cluster.Cluster_DnsLookupFamily.V6_ONLY);
});

test("the ALLOW_ANY_DYNAMIC_DNS cache holds 1024 hosts and resolves through Envoy's resolver without DNS capture", () => {
  const cache = allowAnyDnsCache(proxyWith({ INSTANCE_IPS: ["10.0.0.1"] }));
  assert.equal(cache.name, "allow_any_dfp_dns_cache");
  assert.equal(cache.maxHosts, 1024);
  assert.equal(cache.typedDnsResolverConfig, undefined);
});

test("with DNS capture the cache resolves through the agent's DNS proxy (localhost is 127.0.0.1)", () => {
  const resolvers = (addr: string | undefined) => {
    const config = allowAnyDnsCache(proxyWith({ DNS_CAPTURE: true, DNS_PROXY_ADDR: addr })).typedDnsResolverConfig;
    assert.equal(config?.name, "envoy.network.dns_resolver.cares");
    const cares = config?.typedConfig && unpackAny(config.typedConfig, caresDns.CaresDnsResolverConfigSchema);
    return cares?.resolvers.map((r) =>
      r.address.case === "socketAddress" ? `${r.address.value.address} ${r.address.value.portSpecifier.value}` : "",
    );
  };
  assert.deepEqual(resolvers("localhost:15053"), ["127.0.0.1 15053"]);
  assert.deepEqual(resolvers("[::1]:5353"), ["::1 5353"]);
  assert.deepEqual(resolvers(undefined), ["127.0.0.1 15053"]);
});
