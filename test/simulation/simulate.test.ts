// The simulator's own matching against hand-written config, so that the other tests' verdicts rest on
// Envoy's order: filter chain criteria, virtual host domains, first matching route, original_dst hand-off.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { cluster, hcm, listener, packAny, route, tcpProxy } from "../../src/api/index.ts";
import { type Call, type ProxyConfig, simulate } from "./simulate.ts";

function tcpChain(name: string, match: MessageInitShape<typeof listener.FilterChainMatchSchema>) {
  const proxy = create(tcpProxy.TcpProxySchema, {
    statPrefix: name,
    clusterSpecifier: { case: "cluster", value: name },
  });
  return {
    name,
    filterChainMatch: match,
    filters: [
      { name: "tcp", configType: { case: "typedConfig" as const, value: packAny(tcpProxy.TcpProxySchema, proxy) } },
    ],
  };
}

function tcpListener(
  name: string,
  address: string,
  port: number,
  chains: ReturnType<typeof tcpChain>[],
  useOriginalDst = false,
): listener.Listener {
  return create(listener.ListenerSchema, {
    name,
    address: {
      address: { case: "socketAddress", value: { address, portSpecifier: { case: "portValue", value: port } } },
    },
    filterChains: chains,
    useOriginalDst,
  });
}

const config = (listeners: listener.Listener[], routes: route.RouteConfiguration[] = []): ProxyConfig => ({
  listeners,
  routes,
  clusters: [],
});

const tcpCall: Call = {
  mode: "direct",
  protocol: "tcp",
  address: "10.0.0.1",
  port: 443,
  tls: true,
  sni: "a.example.com",
};

test("filter chains: destination_port before server_names, exact name before wildcard, then transport", () => {
  const chains = [
    tcpChain("by-name", { serverNames: ["a.example.com"] }),
    tcpChain("by-port", { destinationPort: 443 }),
    tcpChain("by-port-wildcard-name", { destinationPort: 443, serverNames: ["*.example.com"] }),
    tcpChain("by-port-exact-name", { destinationPort: 443, serverNames: ["a.example.com"] }),
    tcpChain("by-port-plaintext", { destinationPort: 443, transportProtocol: "raw_buffer" }),
  ];
  const at = config([tcpListener("l", "0.0.0.0", 443, chains)]);
  const chain = (call: Partial<Call>) => simulate(at, { ...tcpCall, ...call }).filterChain;
  assert.equal(chain({}), "by-port-exact-name");
  assert.equal(chain({ sni: "b.example.com" }), "by-port-wildcard-name");
  // No name matches: the port's chains without names, narrowed by transport protocol.
  assert.equal(chain({ sni: "other.test" }), "by-port");
  assert.equal(chain({ sni: undefined, tls: false }), "by-port-plaintext");
  // destination_port is decided first: chains naming no port lose even with a matching name.
  assert.equal(
    simulate(config([tcpListener("l", "0.0.0.0", 80, chains)]), { ...tcpCall, port: 80 }).filterChain,
    "by-name",
  );
});

test("filter chains: longest destination prefix; application protocols; nothing left → no chain", () => {
  const chains = [
    tcpChain("wide", { prefixRanges: [{ addressPrefix: "10.0.0.0", prefixLen: 8 }] }),
    tcpChain("narrow", { prefixRanges: [{ addressPrefix: "10.0.0.0", prefixLen: 24 }] }),
    tcpChain("istio", {
      prefixRanges: [{ addressPrefix: "192.168.0.0", prefixLen: 16 }],
      applicationProtocols: ["istio"],
    }),
  ];
  const at = config([tcpListener("l", "0.0.0.0", 443, chains)]);
  assert.equal(simulate(at, tcpCall).filterChain, "narrow");
  assert.equal(simulate(at, { ...tcpCall, address: "10.1.0.1" }).filterChain, "wide");
  assert.equal(simulate(at, { ...tcpCall, address: "192.168.1.1", alpn: ["istio"] }).filterChain, "istio");
  assert.equal(simulate(at, { ...tcpCall, address: "192.168.1.1", alpn: ["h2"] }).error, "no filter chain matched");
});

test("captured outbound calls: the original destination's listener, else its port's wildcard, else virtualOutbound", () => {
  const at = config([
    tcpListener("virtualOutbound", "0.0.0.0", 15001, [tcpChain("catchall", {})], true),
    tcpListener("specific", "10.96.0.5", 5432, [tcpChain("specific", {})]),
    tcpListener("wildcard", "0.0.0.0", 5432, [tcpChain("wildcard", {})]),
  ]);
  const outbound = (address: string, port: number) =>
    simulate(at, { mode: "outbound", protocol: "tcp", address, port }).tcpProxyCluster;
  assert.equal(outbound("10.96.0.5", 5432), "specific");
  assert.equal(outbound("10.96.0.6", 5432), "wildcard");
  assert.equal(outbound("10.96.0.6", 6379), "catchall");
  // A cluster the proxy was not given is reported.
  const known = { ...at, clusters: [create(cluster.ClusterSchema, { name: "specific" })] };
  const call = (address: string): Call => ({ mode: "outbound", protocol: "tcp", address, port: 5432 });
  assert.equal(simulate(known, call("10.96.0.5")).error, undefined);
  assert.equal(simulate(known, call("10.96.0.6")).error, "unknown cluster wildcard");
});

function httpListener(routeConfigName: string): listener.Listener {
  const manager = create(hcm.HttpConnectionManagerSchema, {
    statPrefix: "http",
    routeSpecifier: { case: "rds", value: { routeConfigName } },
  });
  return create(listener.ListenerSchema, {
    name: "http",
    address: {
      address: {
        case: "socketAddress",
        value: { address: "0.0.0.0", portSpecifier: { case: "portValue", value: 80 } },
      },
    },
    filterChains: [
      {
        filters: [
          {
            name: "hcm",
            configType: { case: "typedConfig", value: packAny(hcm.HttpConnectionManagerSchema, manager) },
          },
        ],
      },
    ],
  });
}

const toCluster = (cluster: string) => ({
  case: "route" as const,
  value: { clusterSpecifier: { case: "cluster" as const, value: cluster } },
});

test("virtual hosts: exact, then longest suffix wildcard, then prefix wildcard, then *", () => {
  const vh = (name: string, domains: string[]) => ({
    name,
    domains,
    routes: [{ match: { pathSpecifier: { case: "prefix" as const, value: "/" } }, action: toCluster(name) }],
  });
  const rc = create(route.RouteConfigurationSchema, {
    name: "80",
    virtualHosts: [
      vh("any", ["*"]),
      vh("prefix", ["api.*"]),
      vh("short-suffix", ["*.com"]),
      vh("long-suffix", ["*.example.com"]),
      vh("exact", ["api.example.com"]),
    ],
  });
  const at = config([httpListener("80")], [rc]);
  const host = (h: string) =>
    simulate(at, { mode: "direct", protocol: "http", address: "10.0.0.1", port: 80, host: h }).virtualHost;
  assert.equal(host("API.example.com"), "exact");
  assert.equal(host("web.example.com"), "long-suffix");
  assert.equal(host("web.other.com"), "short-suffix");
  assert.equal(host("api.internal"), "prefix");
  assert.equal(host("web.internal"), "any");
  // The port is part of the host unless the route config says to ignore it.
  assert.equal(host("web.example.com:80"), "any");
  const ignoring = config([httpListener("80")], [{ ...rc, ignorePortInHostMatching: true }]);
  assert.equal(
    simulate(ignoring, { mode: "direct", protocol: "http", address: "10.0.0.1", port: 80, host: "web.example.com:80" })
      .virtualHost,
    "long-suffix",
  );
});

test("routes: the first whose path, headers and query parameters all match", () => {
  const routes = [
    {
      name: "regex-header",
      match: {
        pathSpecifier: { case: "safeRegex" as const, value: { regex: "/v[0-9]+/items" } },
        headers: [
          {
            name: "x-env",
            headerMatchSpecifier: {
              case: "stringMatch" as const,
              value: { matchPattern: { case: "prefix" as const, value: "prod" } },
            },
          },
        ],
      },
      action: toCluster("regex-header"),
    },
    {
      name: "query",
      match: {
        pathSpecifier: { case: "path" as const, value: "/search" },
        queryParameters: [{ name: "q", queryParameterMatchSpecifier: { case: "presentMatch" as const, value: true } }],
      },
      action: toCluster("query"),
    },
    {
      name: "not-canary",
      match: {
        pathSpecifier: { case: "prefix" as const, value: "/" },
        headers: [
          { name: "x-canary", invertMatch: true, headerMatchSpecifier: { case: "presentMatch" as const, value: true } },
        ],
      },
      action: toCluster("not-canary"),
    },
    { name: "rest", match: { pathSpecifier: { case: "prefix" as const, value: "/" } }, action: toCluster("rest") },
  ];
  const rc = create(route.RouteConfigurationSchema, {
    name: "80",
    virtualHosts: [{ name: "all", domains: ["*"], routes }],
  });
  const at = config([httpListener("80")], [rc]);
  const call = (path: string, headers: Record<string, string> = {}) =>
    simulate(at, { mode: "direct", protocol: "http", address: "10.0.0.1", port: 80, path, headers }).route;
  assert.equal(call("/v2/items", { "X-Env": "production" }), "regex-header");
  assert.equal(call("/v2/items/1", { "x-env": "production" }), "not-canary", "a regex matches the whole path");
  assert.equal(call("/search?q=shoes"), "query");
  assert.equal(call("/search?page=2", { "x-canary": "1" }), "rest");
});
