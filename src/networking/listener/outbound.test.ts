import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { JsonObject } from "@bufbuild/protobuf";
import { assertGolden, readGoldenInput, testdataDir } from "../../../test/support/golden.ts";
import {
  checkedListenersJson,
  meshFrom,
  type ProxyInput,
  proxyFrom,
  service,
} from "../../../test/support/listeners.ts";
import { hcm, type listener, tcpProxy, unpackAny } from "../../api/index.ts";
import type { DestinationRuleSpec } from "../../config/types/index.ts";
import type { Service } from "../../registry/index.ts";
import { buildSidecarOutboundListeners, type SidecarOutboundInput, type VirtualService } from "./index.ts";

const testdata = testdataDir(import.meta.url);

interface GoldenInput {
  proxy?: ProxyInput;
  mesh?: JsonObject;
  services: (Partial<Service> & Pick<Service, "hostname" | "ports">)[];
  virtualServices?: VirtualService[];
  endpoints?: Record<string, string[]>;
  registryOnly?: boolean;
  prometheusStats?: boolean;
  destinationRules?: Record<string, DestinationRuleSpec>;
  allowAnyDynamicDns?: boolean;
}

function inputFrom(golden: GoldenInput): SidecarOutboundInput {
  return {
    proxy: proxyFrom(golden.proxy),
    mesh: meshFrom(golden.mesh),
    services: golden.services.map(service),
    virtualServices: golden.virtualServices,
    endpointAddressesFor: (s, port) => golden.endpoints?.[`${s.hostname}:${port}`] ?? [],
    registryOnly: golden.registryOnly,
    prometheusStats: golden.prometheusStats,
    destinationRuleFor: (h) => golden.destinationRules?.[h],
    allowAnyDynamicDns: golden.allowAnyDynamicDns,
  };
}

function build(services: Service[], extra: Partial<SidecarOutboundInput> = {}): listener.Listener[] {
  return buildSidecarOutboundListeners({ proxy: proxyFrom(), mesh: meshFrom(), services, ...extra });
}

function byName(listeners: listener.Listener[], name: string): listener.Listener {
  const found = listeners.find((l) => l.name === name);
  assert.ok(found, `no listener ${name} in ${listeners.map((l) => l.name).join(", ")}`);
  return found;
}

function hcmOf(chain: listener.FilterChain | undefined): hcm.HttpConnectionManager | undefined {
  const filter = chain?.filters.find((f) => f.name === "envoy.filters.network.http_connection_manager");
  return filter?.configType.case === "typedConfig"
    ? unpackAny(filter.configType.value, hcm.HttpConnectionManagerSchema)
    : undefined;
}

function tcpProxyOf(chain: listener.FilterChain | undefined): tcpProxy.TcpProxy | undefined {
  const filter = chain?.filters.find((f) => f.name === "envoy.filters.network.tcp_proxy");
  return filter?.configType.case === "typedConfig"
    ? unpackAny(filter.configType.value, tcpProxy.TcpProxySchema)
    : undefined;
}

const reviews = service({
  hostname: "reviews.default.svc.cluster.local",
  addresses: ["10.96.0.10"],
  ports: [{ name: "http", port: 9080, protocol: "HTTP", targetPort: 9080 }],
});
const mysql = service({
  hostname: "mysql.default.svc.cluster.local",
  addresses: ["10.96.0.20"],
  ports: [{ name: "tcp", port: 3306, protocol: "TCP", targetPort: 3306 }],
});

describe("sidecar outbound listeners (listener.go buildSidecarOutboundListeners)", () => {
  for (const name of [
    "outbound-http-tcp-auto",
    "outbound-vs-tcp-tls",
    "outbound-headless-none-registry-only",
    "outbound-interception-none-http-proxy",
    "outbound-tcp-destination-rule",
    "outbound-dynamic-dns",
    "outbound-allow-any-dynamic-dns",
  ]) {
    it(`golden: ${name}`, () => {
      const listeners = buildSidecarOutboundListeners(inputFrom(readGoldenInput(testdata, name) as GoldenInput));
      assertGolden(testdata, name, checkedListenersJson(listeners));
    });
  }

  it("an HTTP port gets the shared 0.0.0.0_<port> listener, sniffed, routed by RDS <port>, passthrough by default", () => {
    const l = byName(build([reviews]), "0.0.0.0_9080");
    assert.equal(l.bindToPort, false);
    assert.deepEqual(l.filterChains[0].filterChainMatch?.applicationProtocols, ["http/1.1", "h2c"]);
    const manager = hcmOf(l.filterChains[0]);
    assert.equal(manager?.routeSpecifier.case === "rds" && manager.routeSpecifier.value.routeConfigName, "9080");
    assert.equal(manager?.statPrefix, "outbound_0.0.0.0_9080;");
    assert.equal(manager?.httpFilters.at(-1)?.name, "envoy.filters.http.router");
    assert.equal(l.defaultFilterChain?.name, "PassthroughFilterChain");
    assert.equal(tcpProxyOf(l.defaultFilterChain)?.statPrefix, "PassthroughCluster");
    assert.deepEqual(
      l.listenerFilters.map((f) => f.name),
      ["envoy.filters.listener.http_inspector"],
    );
  });

  it("a TCP port listens on the VIP with one match-all tcp_proxy chain and no inspector", () => {
    const l = byName(build([mysql]), "10.96.0.20_3306");
    assert.equal(l.filterChains.length, 1);
    assert.equal(l.defaultFilterChain, undefined);
    assert.equal(
      tcpProxyOf(l.filterChains[0])?.clusterSpecifier.value,
      "outbound|3306||mysql.default.svc.cluster.local",
    );
    assert.deepEqual(l.listenerFilters, []);
    assert.equal(l.listenerFiltersTimeout?.seconds, 0n);
  });

  it("an undeclared-protocol port on a VIP is sniffed: HTTP chain routed by <fqdn>:<port>, TCP as the default chain", () => {
    const auto = service({
      hostname: "ratings.default.svc.cluster.local",
      addresses: ["10.96.0.30"],
      ports: [{ name: "p", port: 9000, protocol: "UnsupportedProtocol", targetPort: 9000 }],
    });
    const l = byName(build([auto]), "10.96.0.30_9000");
    const manager = hcmOf(l.filterChains[0]);
    assert.equal(
      manager?.routeSpecifier.case === "rds" && manager.routeSpecifier.value.routeConfigName,
      "ratings.default.svc.cluster.local:9000",
    );
    assert.equal(
      tcpProxyOf(l.defaultFilterChain)?.clusterSpecifier.value,
      "outbound|9000||ratings.default.svc.cluster.local",
    );
  });

  it("HTTP and TCP services without VIPs on one port merge into one sniffed listener", () => {
    const tcpNoVip = service({
      hostname: "legacy.example.com",
      registry: "External",
      resolution: "DNSLB",
      selector: null,
      ports: [{ name: "tcp", port: 9080, protocol: "TCP", targetPort: 9080 }],
    });
    const listeners = build([reviews, tcpNoVip]);
    const l = byName(listeners, "0.0.0.0_9080");
    assert.equal(listeners.filter((x) => x.name === "0.0.0.0_9080").length, 1);
    assert.ok(hcmOf(l.filterChains[0]));
    assert.equal(tcpProxyOf(l.defaultFilterChain)?.clusterSpecifier.value, "outbound|9080||legacy.example.com");
  });

  it("weighted VirtualService tcp routes give a tcp_proxy with weighted clusters named after the VirtualService", () => {
    const vs: VirtualService = {
      apiVersion: "networking.istio.io/v1",
      kind: "VirtualService",
      metadata: { name: "split", namespace: "default" },
      spec: {
        hosts: ["mysql"],
        tcp: [
          {
            route: [
              { destination: { host: "mysql", subset: "v1" }, weight: 90 },
              { destination: { host: "mysql", subset: "v2" }, weight: 10 },
              { destination: { host: "mysql", subset: "v3" }, weight: 0 },
            ],
          },
        ],
      },
    };
    const l = byName(build([mysql], { virtualServices: [vs] }), "10.96.0.20_3306");
    const proxy = tcpProxyOf(l.filterChains[0]);
    assert.equal(proxy?.statPrefix, "split.default");
    assert.ok(proxy?.clusterSpecifier.case === "weightedClusters");
    assert.deepEqual(
      proxy.clusterSpecifier.value.clusters.map((c) => [c.name, c.weight]),
      [
        ["outbound|3306|v1|mysql.default.svc.cluster.local", 90],
        ["outbound|3306|v2|mysql.default.svc.cluster.local", 10],
      ],
    );
    assert.equal(
      (l.filterChains[0].metadata?.filterMetadata.istio as JsonObject | undefined)?.config,
      "/apis/networking.istio.io/v1/namespaces/default/virtual-service/split",
    );
  });

  it("TLS passthrough: VirtualService tls sniHosts become sorted server_names with a tls_inspector", () => {
    const https = service({
      hostname: "api.example.com",
      registry: "External",
      resolution: "DNSLB",
      selector: null,
      ports: [{ name: "https", port: 443, protocol: "HTTPS", targetPort: 443 }],
    });
    const vs: VirtualService = {
      apiVersion: "networking.istio.io/v1",
      kind: "VirtualService",
      metadata: { name: "tls", namespace: "default" },
      spec: {
        hosts: ["api.example.com"],
        tls: [
          {
            match: [{ sniHosts: ["b.example.com", "a.example.com"] }],
            route: [{ destination: { host: "api.example.com", port: { number: 443 } } }],
          },
        ],
      },
    };
    const l = byName(build([https], { virtualServices: [vs] }), "0.0.0.0_443");
    assert.deepEqual(l.filterChains[0].filterChainMatch?.serverNames, ["a.example.com", "b.example.com"]);
    assert.deepEqual(
      l.listenerFilters.map((f) => f.name),
      ["envoy.filters.listener.tls_inspector"],
    );
  });

  it("an HTTPS service without a VIP is matched by its hostname as SNI", () => {
    const https = service({
      hostname: "api.example.com",
      registry: "External",
      resolution: "DNSLB",
      selector: null,
      ports: [{ name: "https", port: 443, protocol: "HTTPS", targetPort: 443 }],
    });
    const l = byName(build([https]), "0.0.0.0_443");
    assert.deepEqual(l.filterChains[0].filterChainMatch?.serverNames, ["api.example.com"]);
  });

  it("headless service: one listener per endpoint IP, the proxy's own IP skipped", () => {
    const headless = service({
      hostname: "db.default.svc.cluster.local",
      resolution: "Passthrough",
      ports: [{ name: "tcp", port: 5432, protocol: "TCP", targetPort: 5432 }],
    });
    const listeners = build([headless], { endpointAddressesFor: () => ["10.1.0.5", "10.1.0.6", "10.1.0.7"] });
    assert.deepEqual(
      listeners.filter((l) => l.name.endsWith("_5432")).map((l) => l.name),
      ["10.1.0.6_5432", "10.1.0.7_5432"],
    );
  });

  it("a Kubernetes ExternalName (alias) service gets no listener", () => {
    const alias = service({ ...reviews, resolution: "Alias" });
    assert.deepEqual(
      build([alias]).map((l) => l.name),
      ["virtualOutbound"],
    );
  });

  it("REGISTRY_ONLY: the catch-all chains send unknown traffic to BlackHoleCluster", () => {
    const listeners = build([reviews], { registryOnly: true });
    assert.equal(tcpProxyOf(byName(listeners, "0.0.0.0_9080").defaultFilterChain)?.statPrefix, "BlackHoleCluster");
    const virtual = byName(listeners, "virtualOutbound");
    assert.equal(tcpProxyOf(virtual.filterChains.at(-1))?.clusterSpecifier.value, "BlackHoleCluster");
  });

  it("virtualOutbound: 15001 with use_original_dst, blackhole for itself first, catch-all last", () => {
    const virtual = byName(build([]), "virtualOutbound");
    assert.equal(virtual.useOriginalDst, true);
    assert.deepEqual(
      virtual.filterChains.map((c) => c.name),
      ["virtualOutbound-blackhole", "virtualOutbound-catchall-tcp"],
    );
    assert.equal(virtual.filterChains[0].filterChainMatch?.destinationPort, 15001);
  });

  it("interception NONE: listeners bind to 127.0.0.1 and there is no virtualOutbound", () => {
    const listeners = build([reviews, mysql], { proxy: proxyFrom({ metadata: { INTERCEPTION_MODE: "NONE" } }) });
    assert.deepEqual(
      listeners.map((l) => l.name),
      ["127.0.0.1_9080", "127.0.0.1_3306"],
    );
    assert.ok(listeners.every((l) => l.bindToPort === undefined && l.maxConnectionsToAcceptPerSocketEvent === 1));
  });

  it("Sidecar egress: an explicit port takes its listener; the catch-all adds nothing to it", () => {
    const other = service({
      hostname: "other.default.svc.cluster.local",
      addresses: ["10.96.0.40"],
      ports: [{ name: "http", port: 9080, protocol: "HTTP", targetPort: 9080 }],
    });
    const listeners = build([], {
      egressListeners: [
        { egress: { port: { number: 9080, protocol: "HTTP" }, hosts: ["./*"] }, services: [reviews] },
        { services: [other, mysql] },
      ],
    });
    assert.deepEqual(
      listeners.map((l) => l.name),
      ["0.0.0.0_9080", "10.96.0.20_3306", "virtualOutbound"],
    );
  });

  it("Sidecar egress captureMode NONE: that listener binds a real port on localhost (or its bind)", () => {
    const listeners = build([], {
      egressListeners: [
        { egress: { port: { number: 3306, protocol: "TCP" }, captureMode: "NONE", hosts: ["./*"] }, services: [mysql] },
        {
          egress: { port: { number: 9080, protocol: "HTTP" }, bind: "127.0.0.2", captureMode: "NONE", hosts: ["./*"] },
          services: [reviews],
        },
      ],
    });
    const names = listeners.map((l) => l.name);
    assert.deepEqual(names, ["127.0.0.1_3306", "127.0.0.2_9080", "virtualOutbound"]);
    assert.equal(listeners[0].bindToPort, undefined);
    assert.equal(listeners[0].maxConnectionsToAcceptPerSocketEvent, 1);
  });
});
