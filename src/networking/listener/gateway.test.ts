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
import { hcm, type listener, tls, unpackAny } from "../../api/index.ts";
import type { DestinationRuleSpec, GatewayServers } from "../../config/types/index.ts";
import type { Service } from "../../registry/index.ts";
import {
  buildGatewayListeners,
  type GatewayPortInput,
  type GatewayServerInput,
  type RouterInput,
  type VirtualService,
} from "./index.ts";

const testdata = testdataDir(import.meta.url);

interface GoldenInput {
  proxy?: ProxyInput;
  mesh?: JsonObject;
  gateways: { namespace: string; name: string; servers: GatewayServers[] }[];
  virtualServices?: Record<string, VirtualService[]>;
  services?: (Partial<Service> & Pick<Service, "hostname" | "ports">)[];
  destinationRules?: Record<string, DestinationRuleSpec>;
  proxyProtocol?: boolean;
  /** PILOT_ENABLE_QUIC_LISTENERS with every port on UDP too: the HTTPS-terminating servers get QUIC listeners. */
  quic?: boolean;
}

function inputFrom(golden: GoldenInput): RouterInput {
  const servers = golden.gateways.flatMap((g) =>
    g.servers.map((server) => ({ server, gatewayName: `${g.namespace}/${g.name}` })),
  );
  const http3 = ({ server }: GatewayServerInput) =>
    server.port.protocol === "HTTPS" && server.tls?.mode !== "PASSTHROUGH" && server.tls?.mode !== "AUTO_PASSTHROUGH";
  return {
    proxy: proxyFrom({ type: "router", ...golden.proxy }),
    mesh: meshFrom(golden.mesh),
    ports: mergedPorts(servers),
    quicPorts: golden.quic ? mergedPorts(servers.filter(http3)) : undefined,
    virtualServicesFor: (gw) => golden.virtualServices?.[gw] ?? [],
    services: (golden.services ?? []).map(service),
    destinationRuleFor: (h) => golden.destinationRules?.[h],
    proxyProtocol: golden.proxyProtocol,
  };
}

/** The servers grouped by listened port and bind, as the model's gateway merge does. */
function mergedPorts(servers: GatewayServerInput[]): GatewayPortInput[] {
  const ports = new Map<string, GatewayPortInput & { servers: GatewayServerInput[] }>();
  for (const entry of servers) {
    const number = entry.server.port.targetPort || entry.server.port.number;
    const bind = entry.server.bind ?? "";
    const key = `${bind}:${number}`;
    const port = ports.get(key) ?? { port: { number, protocol: entry.server.port.protocol, bind }, servers: [] };
    port.servers.push(entry);
    ports.set(key, port);
  }
  return [...ports.values()];
}

function build(servers: GatewayServers[], extra: Partial<RouterInput> = {}): listener.Listener[] {
  return buildGatewayListeners({
    proxy: proxyFrom({ type: "router" }),
    mesh: meshFrom(),
    ports: mergedPorts(servers.map((server) => ({ server, gatewayName: "istio-system/gw" }))),
    ...extra,
  });
}

function hcmOf(chain: listener.FilterChain | undefined): hcm.HttpConnectionManager | undefined {
  const filter = chain?.filters.find((f) => f.name === "envoy.filters.network.http_connection_manager");
  return filter?.configType.case === "typedConfig"
    ? unpackAny(filter.configType.value, hcm.HttpConnectionManagerSchema)
    : undefined;
}

function tlsOf(chain: listener.FilterChain | undefined): tls.DownstreamTlsContext | undefined {
  const socket = chain?.transportSocket;
  return socket?.configType.case === "typedConfig"
    ? unpackAny(socket.configType.value, tls.DownstreamTlsContextSchema)
    : undefined;
}

const httpServer: GatewayServers = { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] };
const httpsServer = (mode: NonNullable<GatewayServers["tls"]>["mode"], extra = {}): GatewayServers => ({
  port: { number: 443, name: "https", protocol: "HTTPS" },
  hosts: ["istio-system/bookinfo.example.com"],
  tls: { mode, credentialName: "bookinfo-cert", ...extra },
});

describe("gateway listeners (gateway.go buildGatewayListeners)", () => {
  for (const name of ["gateway-http-https", "gateway-passthrough-tcp", "gateway-auto-passthrough", "gateway-quic"]) {
    it(`golden: ${name}`, () => {
      const listeners = buildGatewayListeners(inputFrom(readGoldenInput(testdata, name) as GoldenInput));
      assertGolden(testdata, name, checkedListenersJson(listeners));
    });
  }

  it("plain HTTP servers share one chain routed by http.<port>, with remote address and SANITIZE_SET", () => {
    const [l] = build([httpServer, { ...httpServer, hosts: ["other.example.com"] }]);
    assert.equal(l.name, "0.0.0.0_80");
    assert.equal(l.filterChains.length, 1);
    const manager = hcmOf(l.filterChains[0]);
    assert.equal(manager?.routeSpecifier.case === "rds" && manager.routeSpecifier.value.routeConfigName, "http.80");
    assert.equal(manager?.useRemoteAddress, true);
    assert.equal(manager?.forwardClientCertDetails, hcm.HttpConnectionManager_ForwardClientCertDetails.SANITIZE_SET);
    assert.equal(manager?.statPrefix, "outbound_0.0.0.0_80;");
    assert.deepEqual(l.listenerFilters, []);
  });

  it("the listener port is the Service target port when the Gateway reaches the pod through a Service", () => {
    const [l] = build([{ ...httpServer, port: { ...httpServer.port, targetPort: 8080 } }]);
    assert.equal(l.name, "0.0.0.0_8080");
    const manager = hcmOf(l.filterChains[0]);
    assert.equal(manager?.routeSpecifier.case === "rds" && manager.routeSpecifier.value.routeConfigName, "http.8080");
  });

  it("SIMPLE with credentialName: SNI chain, kubernetes:// certificate over ADS, no client certificate", () => {
    const [l] = build([httpsServer("SIMPLE")]);
    const chain = l.filterChains[0];
    assert.deepEqual(chain.filterChainMatch?.serverNames, ["bookinfo.example.com"]);
    const context = tlsOf(chain);
    assert.equal(context?.requireClientCertificate, false);
    const sds = context?.commonTlsContext?.tlsCertificateSdsSecretConfigs[0];
    assert.equal(sds?.name, "kubernetes://bookinfo-cert");
    assert.equal(sds?.sdsConfig?.configSourceSpecifier.case, "ads");
    const manager = hcmOf(chain);
    assert.equal(
      manager?.routeSpecifier.case === "rds" && manager.routeSpecifier.value.routeConfigName,
      "https.443.https.gw.istio-system",
    );
    assert.deepEqual(
      l.listenerFilters.map((f) => f.name),
      ["envoy.filters.listener.tls_inspector"],
    );
  });

  it("MUTUAL: client certificates required and validated against <credentialName>-cacert", () => {
    const [l] = build([httpsServer("MUTUAL", { subjectAltNames: ["client.example.com"] })]);
    const context = tlsOf(l.filterChains[0]);
    assert.equal(context?.requireClientCertificate, true);
    const validation = context?.commonTlsContext?.validationContextType;
    assert.ok(validation?.case === "combinedValidationContext");
    assert.equal(validation.value.validationContextSdsSecretConfig?.name, "kubernetes://bookinfo-cert-cacert");
  });

  it("ISTIO_MUTUAL: the workload certificate default and ROOTCA from the agent", () => {
    const [l] = build([httpsServer("ISTIO_MUTUAL", { credentialName: undefined })]);
    const context = tlsOf(l.filterChains[0]);
    assert.equal(context?.requireClientCertificate, true);
    assert.deepEqual(
      context?.commonTlsContext?.tlsCertificateSdsSecretConfigs.map((s) => s.name),
      ["default"],
    );
  });

  it("a named HTTPS server's HCM stat prefix is the server name", () => {
    const [l] = build([{ ...httpsServer("SIMPLE"), name: "bookinfo-https" }]);
    assert.equal(hcmOf(l.filterChains[0])?.statPrefix, "bookinfo-https");
  });

  it("TLS settings without a mode pass through by SNI (PASSTHROUGH is the mode's zero value)", () => {
    // A Gateway API TLS Passthrough listener converts to exactly this server.
    const passthrough: VirtualService = {
      apiVersion: "networking.istio.io/v1",
      kind: "VirtualService",
      metadata: { name: "nginx", namespace: "default" },
      spec: {
        hosts: ["nginx.example.com"],
        tls: [
          {
            match: [{ sniHosts: ["nginx.example.com"] }],
            route: [{ destination: { host: "nginx.default.svc.cluster.local", port: { number: 443 } } }],
          },
        ],
      },
    };
    const [l] = build(
      [{ port: { number: 8443, name: "default", protocol: "TLS" }, hosts: ["*/*.example.com"], tls: {} }],
      {
        virtualServicesFor: () => [passthrough],
      },
    );
    assert.equal(l.name, "0.0.0.0_8443");
    assert.deepEqual(l.filterChains[0].filterChainMatch?.serverNames, ["nginx.example.com"]);
    assert.equal(l.filterChains[0].transportSocket, undefined);
  });

  it("a TCP server no VirtualService routes yields no listener", () => {
    assert.deepEqual(build([{ port: { number: 31400, name: "tcp", protocol: "TCP" }, hosts: ["*"] }]), []);
  });

  it("an unprivileged gateway pod skips ports below 1024", () => {
    const proxy = proxyFrom({ type: "router", metadata: { UNPRIVILEGED_POD: "true" } });
    assert.deepEqual(build([httpServer], { proxy }), []);
  });

  it("ProxyConfig gatewayTopology: trusted hops, client cert forwarding and PROXY protocol", () => {
    const proxy = proxyFrom({
      type: "router",
      metadata: {
        PROXY_CONFIG: {
          gatewayTopology: { numTrustedProxies: 2, forwardClientCertDetails: "FORWARD_ONLY", proxyProtocol: {} },
        },
      },
    });
    const [l] = build([httpServer], { proxy });
    const manager = hcmOf(l.filterChains[0]);
    assert.equal(manager?.xffNumTrustedHops, 2);
    assert.equal(manager?.forwardClientCertDetails, hcm.HttpConnectionManager_ForwardClientCertDetails.FORWARD_ONLY);
    assert.equal(manager?.setCurrentClientCertDetails, undefined);
    assert.deepEqual(
      l.listenerFilters.map((f) => f.name),
      ["envoy.filters.listener.proxy_protocol"],
    );
  });
});
