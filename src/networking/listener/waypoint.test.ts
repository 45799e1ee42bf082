import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { makeMesh, makeProxy, makeService } from "../../../test/support/cluster-fixtures.ts";
import {
  core,
  type hcm,
  listener,
  type setFilterStateHttp,
  type setFilterStateNetwork,
  type tcpProxy,
  type tls,
  unpackAny,
  xdsMatcher,
} from "../../api/index.ts";
import type { Service } from "../../registry/index.ts";
import { envoyViolations } from "../httpfilter/index.ts";
import { buildWaypointListeners, type MainInternalInput, type WaypointServiceInput } from "./index.ts";

/** A waypoint serving no service and no workload. */
const emptyWaypoint = (proxy: MainInternalInput["proxy"], mesh: MainInternalInput["mesh"]): MainInternalInput => ({
  proxy,
  mesh,
  services: [],
  workloads: [],
  policies: {},
  lookupService: () => undefined,
  destinationRuleFor: () => undefined,
});

const unpack = <T>(filter: listener.Filter | undefined): T => {
  assert.equal(filter?.configType.case, "typedConfig");
  return unpackAny(filter.configType.value) as T;
};

describe("a waypoint's listeners (buildWaypointInbound)", () => {
  const proxy = {
    ...makeProxy({ type: "waypoint", network: "west" }),
    istioVersion: { major: 1, minor: 29, patch: 1 },
  };
  const listeners = buildWaypointListeners(emptyWaypoint(proxy, makeMesh()));
  const byName = new Map(listeners.map((l) => [l.name, l]));

  it("connect_terminate, main_internal, then the internal listeners that send traffic on; each valid for Envoy", () => {
    assert.deepEqual(
      listeners.map((l) => l.name),
      ["connect_terminate", "main_internal", "connect_originate", "inner_connect_originate", "outer_connect_originate"],
    );
    for (const l of listeners) assert.deepEqual(envoyViolations(listener.ListenerSchema, l), [], l.name);
    for (const name of ["main_internal", "connect_originate", "inner_connect_originate", "outer_connect_originate"]) {
      assert.equal(byName.get(name)?.listenerSpecifier.case, "internalListener", name);
    }
  });

  it("connect_terminate takes HBONE on 15008 from mesh peers with certificates, and sends each CONNECT to main_internal", () => {
    const l = byName.get("connect_terminate");
    assert.ok(l);
    assert.equal(l.address?.address.case, "socketAddress");
    assert.equal(l.address.address.value.portSpecifier.value, 15008);
    const chain = l.filterChains[0];
    const context = unpackAny(chain.transportSocket?.configType.value as never) as tls.DownstreamTlsContext;
    assert.equal(context.requireClientCertificate, true);
    assert.deepEqual(context.commonTlsContext?.alpnProtocols, ["h2"]);
    const manager = unpack<hcm.HttpConnectionManager>(chain.filters[0]);
    assert.equal(manager.routeSpecifier.case, "routeConfig");
    const routeAction = manager.routeSpecifier.value.virtualHosts[0]?.routes[0]?.action;
    assert.equal(routeAction?.case, "route");
    assert.deepEqual(routeAction.value.clusterSpecifier, { case: "cluster", value: "main_internal" });
    assert.deepEqual(
      manager.httpFilters.map((f) => f.name),
      ["waypoint_downstream_peer_metadata", "connect_authority", "envoy.filters.http.router"],
    );
    // A proxy before 1.29.2 has no istio.hashable_string factory.
    const authority = unpackAny(manager.httpFilters[1]?.configType.value as never) as setFilterStateHttp.Config;
    assert.deepEqual(
      authority.onRequestHeaders.map((v) => v.factoryKey),
      ["", "envoy.string", "", "envoy.string", "envoy.string"],
    );
  });

  it("the double-HBONE listeners tunnel to the target the endpoint names, saying where the request comes from", () => {
    const inner = byName.get("inner_connect_originate")?.filterChains[0]?.filters ?? [];
    const state = unpack<setFilterStateNetwork.Config>(inner[0]);
    assert.deepEqual(
      state.onNewConnection.map((v) => v.key.value),
      ["envoy.filters.listener.original_dst.local_ip", "istio.double_hbone.hbone_target_address"],
    );
    const innerProxy = unpack<tcpProxy.TcpProxy>(inner[1]);
    assert.deepEqual(innerProxy.clusterSpecifier, { case: "cluster", value: "inner_connect_originate" });
    assert.deepEqual(
      innerProxy.tunnelingConfig?.headersToAdd.map((h) => [h.header?.key, h.header?.value]),
      [["x-forwarded-network", "west"]],
    );
    const outerProxy = unpack<tcpProxy.TcpProxy>(byName.get("outer_connect_originate")?.filterChains[0]?.filters[0]);
    assert.deepEqual(
      outerProxy.tunnelingConfig?.headersToAdd.map((h) => [h.header?.key, h.header?.value]),
      [["x-istio-source", "waypoint"]],
    );
    const originate = unpack<tcpProxy.TcpProxy>(byName.get("connect_originate")?.filterChains[0]?.filters[0]);
    assert.equal(originate.tunnelingConfig?.hostname, "%DOWNSTREAM_LOCAL_ADDRESS%");
  });

  it("with the mesh's access log, HBONE origination logs upstream failures, termination failed requests, each listener unmatched connections", () => {
    const logged = buildWaypointListeners(emptyWaypoint(proxy, makeMesh({ accessLogFile: "/dev/stdout" })));
    const filterOf = (log: { filter?: { filterSpecifier: { case?: string } } } | undefined) =>
      log?.filter?.filterSpecifier.case;
    const terminate = logged[0];
    const manager = unpack<hcm.HttpConnectionManager>(terminate.filterChains[0]?.filters[0]);
    assert.deepEqual(manager.accessLog.map(filterOf), ["statusCodeFilter"]);
    const originate = unpack<tcpProxy.TcpProxy>(logged[2].filterChains[0]?.filters[0]);
    assert.deepEqual(originate.accessLog.map(filterOf), ["responseFlagFilter"]);
    for (const l of logged) {
      assert.deepEqual(l.accessLog.map(filterOf), ["responseFlagFilter"], l.name);
      assert.deepEqual(envoyViolations(listener.ListenerSchema, l), [], l.name);
    }
  });
});

describe("a waypoint's main_internal listener (buildWaypointInternal)", () => {
  const proxy = makeProxy({ type: "waypoint", configNamespace: "shop" });
  const web = makeService({
    hostname: "web.shop.svc.cluster.local",
    namespace: "shop",
    addresses: ["10.96.1.2"],
    ports: [{ port: 80, protocol: "HTTP" }],
  });
  const db = makeService({
    hostname: "db.shop.svc.cluster.local",
    namespace: "shop",
    addresses: ["10.96.1.3"],
    ports: [{ name: "tcp", port: 5432, protocol: "TCP" }],
  });
  const legacy = makeService({
    hostname: "legacy.shop.svc.cluster.local",
    namespace: "shop",
    addresses: ["10.96.1.4"],
    ports: [{ name: "legacy", port: 8000, protocol: "UnsupportedProtocol" }],
  });
  const served = (service: Service, extra: Partial<WaypointServiceInput> = {}): WaypointServiceInput => ({
    service,
    addresses: service.addresses,
    virtualServices: [],
    policies: {},
    ...extra,
  });
  const build = (input: Partial<MainInternalInput>) => {
    const services = input.services ?? [];
    const listeners = buildWaypointListeners({
      proxy,
      mesh: makeMesh(),
      services,
      workloads: [],
      policies: {},
      lookupService: (hostname) =>
        [web, db, legacy, ...services.map((s) => s.service)].find((s) => s.hostname === hostname),
      destinationRuleFor: () => undefined,
      ...input,
    });
    const l = listeners[1];
    assert.equal(l.name, "main_internal");
    assert.deepEqual(envoyViolations(listener.ListenerSchema, l), []);
    return l;
  };
  const chain = (l: listener.Listener, name: string) => {
    const found = l.filterChains.find((c) => c.name === name);
    assert.ok(found, name);
    return found;
  };
  const ipMatcher = (l: listener.Listener): xdsMatcher.IPMatcher => {
    const tree = l.filterChainMatcher?.matcherType;
    assert.equal(tree?.case, "matcherTree");
    assert.equal(tree.value.treeType.case, "customMatch");
    return unpackAny(
      tree.value.treeType.value.typedConfig as never,
      xdsMatcher.IPMatcherSchema,
    ) as xdsMatcher.IPMatcher;
  };
  const actionOf = (onMatch: xdsMatcher.Matcher_OnMatch | undefined) => {
    assert.equal(onMatch?.onMatch.case, "action");
    return onMatch.onMatch.value.name;
  };
  const subMatcher = (onMatch: xdsMatcher.Matcher_OnMatch | undefined) => {
    assert.equal(onMatch?.onMatch.case, "matcher");
    const tree = onMatch.onMatch.value.matcherType;
    assert.equal(tree.case, "matcherTree");
    assert.equal(tree.value.treeType.case, "exactMatchMap");
    return {
      map: tree.value.treeType.value.map,
      onNoMatch: onMatch.onMatch.value.onNoMatch,
      input: tree.value.input?.name,
    };
  };

  it("serves each service port by its protocol's chain, picked by VIP then port; a sniffed port gets both, by detected protocol", () => {
    const l = build({ services: [served(web), served(db), served(legacy)] });
    assert.equal(l.listenerSpecifier.case, "internalListener");
    assert.equal(l.trafficDirection, core.TrafficDirection.INBOUND);
    assert.deepEqual(
      l.filterChains.map((c) => c.name),
      [
        "inbound-vip|80|http|web.shop.svc.cluster.local",
        "inbound-vip|5432|tcp|db.shop.svc.cluster.local",
        "inbound-vip|8000|tcp|legacy.shop.svc.cluster.local",
        "inbound-vip|8000|http|legacy.shop.svc.cluster.local",
        "direct-tcp",
        "direct-http",
      ],
    );
    const ranges = ipMatcher(l).rangeMatchers;
    assert.deepEqual(
      ranges.map((r) => r.ranges.map((c) => `${c.addressPrefix}/${c.prefixLen}`)),
      [["10.96.1.2/32"], ["10.96.1.3/32"], ["10.96.1.4/32"]],
    );
    const ports = ranges.map((r) => subMatcher(r.onMatch));
    assert.deepEqual(
      ports.map((p) => p.input),
      ["port", "port", "port"],
    );
    assert.equal(actionOf(ports[0].map["80"]), "inbound-vip|80|http|web.shop.svc.cluster.local");
    assert.equal(actionOf(ports[1].map["5432"]), "inbound-vip|5432|tcp|db.shop.svc.cluster.local");
    const sniffed = subMatcher(ports[2].map["8000"]);
    assert.equal(sniffed.input, "application-protocol");
    assert.equal(actionOf(sniffed.map["'http/1.1'"]), "inbound-vip|8000|http|legacy.shop.svc.cluster.local");
    assert.equal(actionOf(sniffed.map["'h2c'"]), "inbound-vip|8000|http|legacy.shop.svc.cluster.local");
    assert.equal(actionOf(sniffed.onNoMatch), "inbound-vip|8000|tcp|legacy.shop.svc.cluster.local");
    // http_inspector runs only where the protocol is unknown; no TLS port, no tls_inspector.
    assert.deepEqual(
      l.listenerFilters.map((f) => f.name),
      ["envoy.filters.listener.original_dst", "envoy.filters.listener.http_inspector"],
    );
    const disabled = l.listenerFilters[1].filterDisabled?.rule;
    assert.equal(disabled?.case, "orMatch");
    assert.deepEqual(
      disabled.value.rules.map((r) => (r.rule.case === "destinationPortRange" ? r.rule.value.start : -1)),
      [80, 5432],
    );
    // The HTTP chain routes to its cluster by default; the TCP chain's tcp_proxy sends to its own.
    const manager = unpack<hcm.HttpConnectionManager>(
      chain(l, "inbound-vip|80|http|web.shop.svc.cluster.local").filters[0],
    );
    assert.equal(manager.routeSpecifier.case, "routeConfig");
    const action = manager.routeSpecifier.value.virtualHosts[0].routes[0].action;
    assert.equal(action.case, "route");
    assert.deepEqual(action.value.clusterSpecifier, {
      case: "cluster",
      value: "inbound-vip|80|http|web.shop.svc.cluster.local",
    });
    assert.equal(manager.forwardClientCertDetails, 0, "no client certificate inside HBONE");
    const tcp = chain(l, "inbound-vip|5432|tcp|db.shop.svc.cluster.local").filters;
    assert.deepEqual(
      tcp.map((f) => f.name),
      ["istio.metadata_exchange", "envoy.filters.network.tcp_proxy"],
    );
  });

  it("serves the workloads bound to it directly: direct-tcp and direct-http to encap, matched by their IPs", () => {
    const l = build({ services: [served(web)], workloads: [{ addresses: ["10.244.0.5", "fd00::5"] }] });
    const ranges = ipMatcher(l).rangeMatchers;
    assert.equal(ranges.length, 2);
    assert.deepEqual(
      ranges[1].ranges.map((c) => `${c.addressPrefix}/${c.prefixLen}`),
      ["10.244.0.5/32", "fd00::5/128"],
    );
    const byProtocol = subMatcher(ranges[1].onMatch);
    assert.equal(byProtocol.input, "application-protocol");
    assert.equal(actionOf(byProtocol.map["'http/1.1'"]), "direct-http");
    assert.equal(actionOf(byProtocol.onNoMatch), "direct-tcp");
    const directTcp = chain(l, "direct-tcp").filters;
    assert.equal(directTcp[0].name, "connect_authority");
    const tcp = unpack<tcpProxy.TcpProxy>(directTcp.at(-1));
    assert.deepEqual(tcp.clusterSpecifier, { case: "cluster", value: "encap" });
    const directHttp = chain(l, "direct-http").filters;
    assert.deepEqual(
      directHttp.map((f) => f.name),
      ["connect_authority", "envoy.filters.network.http_connection_manager"],
    );
    // Any port of a workload may come: http_inspector everywhere.
    const inspector = l.listenerFilters.find((f) => f.name === "envoy.filters.listener.http_inspector");
    assert.equal(inspector?.filterDisabled, undefined);
    // Without workloads the direct chains are there but nothing matches them.
    assert.equal(ipMatcher(build({ services: [served(web)] })).rangeMatchers.length, 1);
  });

  it("has tls_inspector only with a TLS port, left off on the other ports", () => {
    assert.equal(
      build({ services: [served(web), served(db)] }).listenerFilters.some(
        (f) => f.name === "envoy.filters.listener.tls_inspector",
      ),
      false,
    );
    const secure = makeService({
      hostname: "secure.shop.svc.cluster.local",
      namespace: "shop",
      ports: [{ name: "tls", port: 443, protocol: "TLS" }],
    });
    const l = build({ services: [served(web), served(secure)] });
    const inspector = l.listenerFilters.find((f) => f.name === "envoy.filters.listener.tls_inspector");
    assert.ok(inspector);
    assert.equal(inspector.filterDisabled?.rule.case, "destinationPortRange");
    assert.equal(inspector.filterDisabled.rule.value.start, 80);
  });

  it("enforces a targeted AuthorizationPolicy: RBAC in every HTTP chain before the route's filters, on the TCP chains as a network filter", () => {
    const policies = {
      authz: {
        custom: [],
        deny: [],
        audit: [],
        allow: [
          {
            name: "api-get",
            namespace: "shop",
            annotations: {},
            spec: { rules: [{ to: [{ operation: { methods: ["GET"], paths: ["/api/*"] } }] }] },
          },
        ],
      },
      authzOptions: { trustDomains: ["cluster.local"], useFilterState: true },
    };
    const l = build({ services: [served(web, { policies }), served(db, { policies })], policies });
    for (const name of ["inbound-vip|80|http|web.shop.svc.cluster.local", "direct-http"]) {
      const manager = unpack<hcm.HttpConnectionManager>(chain(l, name).filters.at(-1));
      assert.deepEqual(
        manager.httpFilters.map((f) => f.name),
        [
          "envoy.filters.http.rbac",
          "envoy.filters.http.grpc_stats",
          "envoy.filters.http.fault",
          "envoy.filters.http.cors",
          "waypoint_upstream_peer_metadata",
          "envoy.filters.http.router",
        ],
        name,
      );
    }
    for (const name of ["inbound-vip|5432|tcp|db.shop.svc.cluster.local", "direct-tcp"]) {
      assert.ok(
        chain(l, name).filters.some((f) => f.name === "envoy.filters.network.rbac"),
        name,
      );
    }
    // Without policies, nothing is enforced on the service's chains.
    const open = unpack<hcm.HttpConnectionManager>(
      chain(build({ services: [served(web)] }), "inbound-vip|80|http|web.shop.svc.cluster.local").filters[0],
    );
    assert.equal(
      open.httpFilters.some((f) => f.name === "envoy.filters.http.rbac"),
      false,
    );
  });

  it("a VirtualService tcp route picks the tcp_proxy's cluster: the subset's inbound VIP cluster, or outbound for a host it does not serve", () => {
    const vs = (destination: { host: string; subset?: string; port?: { number: number } }) => ({
      apiVersion: "networking.istio.io/v1",
      kind: "VirtualService",
      metadata: { name: "db", namespace: "shop" },
      spec: { hosts: ["db.shop.svc.cluster.local"], tcp: [{ route: [{ destination }] }] },
    });
    const proxyOf = (l: listener.Listener) =>
      unpack<tcpProxy.TcpProxy>(chain(l, "inbound-vip|5432|tcp|db.shop.svc.cluster.local").filters.at(-1));
    const subset = proxyOf(
      build({
        services: [served(db, { virtualServices: [vs({ host: "db.shop.svc.cluster.local", subset: "primary" })] })],
      }),
    );
    assert.deepEqual(subset.clusterSpecifier, {
      case: "cluster",
      value: "inbound-vip|5432|tcp/primary|db.shop.svc.cluster.local",
    });
    assert.equal(subset.statPrefix, "inbound-vip|5432|tcp|db.shop.svc.cluster.local");
    const elsewhere = proxyOf(
      build({
        services: [served(db, { virtualServices: [vs({ host: "web.shop.svc.cluster.local", port: { number: 80 } })] })],
      }),
    );
    assert.deepEqual(elsewhere.clusterSpecifier, { case: "cluster", value: "outbound|80||web.shop.svc.cluster.local" });
  });
});
