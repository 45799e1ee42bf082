// Router (gateway) listeners (gateway.go buildGatewayListeners): one listener per (bind, port) of
// the merged Gateway servers. Plain HTTP servers share one chain routed by `http.<port>`; each
// HTTPS-terminating server gets an SNI chain with its TLS context and `https.<port>.<name>.<gw>.<ns>`;
// TCP/TLS servers route by VirtualService tcp rules; PASSTHROUGH by tls SNI matches; AUTO_PASSTHROUGH
// by the SNI-DNAT names of the services.
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { core, type hcm, listener, type tls } from "../../api/index.ts";
import type { GatewayServers } from "../../config/types/index.ts";
import { isPassthroughServer, serverTlsMode } from "../../model/index.ts";
import type { Service } from "../../registry/index.ts";
import { hostsMatch, weakTable } from "../../util/index.ts";
import { buildHttpFilters } from "../httpfilter/index.ts";
import { buildListenerAccessLogs } from "./accesslog.ts";
import { connectionBalance, listenerName, socketAddress, wildcardAddress } from "./address.ts";
import { ALL_ISTIO_MTLS_ALPN } from "./filterchain-match.ts";
import { buildHcmFilter } from "./hcm.ts";
import { type InboundPolicies, networkAuthzFilters } from "./inbound.ts";
import { newFilterChain, newFilterChainMatch } from "./message.ts";
import { protocolClass, proxyProtocolFilter, tlsInspectorFilter } from "./sniffing.ts";
import {
  buildTcpFilterStack,
  METADATA_EXCHANGE_NETWORK_FILTER,
  type RouteContext,
  routeTcpFilters,
  tcpStatsFilter,
} from "./tcp.ts";
import { downstreamQuicSocket, downstreamTlsSocket, gatewayTlsContext } from "./tls.ts";
import { envMemos, gatewayTopology, type ListenerEnv, type VirtualService, vsRef } from "./types.ts";

/** A server of a Gateway that selects this proxy. */
export interface GatewayServerInput {
  server: GatewayServers;
  /** The owning Gateway, `namespace/name`. */
  gatewayName: string;
}

/** One port (and bind) the gateway listens on, with the servers merged onto it (the model's MergedPort fits). */
export interface GatewayPortInput {
  /** The port listened on: the Service targetPort when the Gateway reaches the pod through a Service. */
  port: { number: number; protocol: string; bind: string };
  servers: readonly GatewayServerInput[];
}

export interface RouterInput extends ListenerEnv {
  /** The merged Gateway servers by listened port, in order (conflicting servers already dropped). */
  ports: readonly GatewayPortInput[];
  /** VirtualServices bound to a Gateway (`<ns>/<name>`), in precedence order. */
  virtualServicesFor?: (gateway: string) => readonly VirtualService[];
  /** Services visible to the gateway (AUTO_PASSTHROUGH chains, single-port destinations). */
  services?: readonly Service[];
  /**
   * The DestinationRule of a visible service's host: AUTO_PASSTHROUGH adds a chain per subset; it
   * shapes tcp_proxy (see TcpProxyRule), tunnelling only on VirtualService tcp/tls routes.
   */
  destinationRuleFor?: RouteContext["destinationRuleFor"];
  /** Authentication and authorization applying to the gateway, and metrics. */
  policies?: InboundPolicies;
  /**
   * PILOT_ENABLE_QUIC_LISTENERS: the HTTPS servers also served over QUIC (the model's quicPorts), each
   * port with a UDP listener `udp_<bind>_<port>` of HTTP/3 chains.
   */
  quicPorts?: readonly GatewayPortInput[];
  /** A proxy_protocol listener filter first (default: ProxyConfig gatewayTopology.proxyProtocol is set). */
  proxyProtocol?: boolean;
  domainSuffix?: string;
}

const TRANSPORT_SOCKET_CONNECT_TIMEOUT = create(DurationSchema, { seconds: 15n });

/** The RDS name of an HTTP or HTTPS-terminating server (pilot/pkg/model/gateway.go gatewayRDSRouteName). */
export function gatewayRouteName(input: GatewayServerInput, listenerPort: number): string {
  const { server } = input;
  const bind = server.bind ? `.${server.bind}` : "";
  if (isHttpServer(server)) return `http.${listenerPort}${bind}`;
  const [namespace, name] = input.gatewayName.split("/");
  return `https.${server.port.number}.${server.port.name}.${name}.${namespace}${bind}`;
}

function isHttpServer(server: GatewayServers): boolean {
  return protocolClass(parseServerProtocol(server.port.protocol)) === "http";
}

function isHttpsTerminating(server: GatewayServers): boolean {
  return parseServerProtocol(server.port.protocol) === "HTTPS" && !isPassthroughServer(server);
}

/** Protocol names are case-insensitive; the registry's canonical spelling. */
function parseServerProtocol(protocol: string): Parameters<typeof protocolClass>[0] {
  const upper = protocol.toUpperCase();
  const canonical: Record<string, Parameters<typeof protocolClass>[0]> = {
    HTTP: "HTTP",
    HTTP2: "HTTP2",
    GRPC: "GRPC",
    "GRPC-WEB": "GRPC-Web",
    HTTPS: "HTTPS",
    TLS: "TLS",
    TCP: "TCP",
    MONGO: "Mongo",
    REDIS: "Redis",
    MYSQL: "MySQL",
  };
  return canonical[upper] ?? "UnsupportedProtocol";
}

/** SNI names of a TLS server: its hosts without `ns/`, sorted, unique. */
function sniHostsOf(server: GatewayServers): string[] {
  if (!server.tls) return [];
  return [...new Set(server.hosts.map((h) => (h.includes("/") ? h.slice(h.indexOf("/") + 1) : h)))].sort();
}

interface ChainOpts {
  sniHosts: readonly string[];
  applicationProtocols: readonly string[];
  tlsContext?: tls.DownstreamTlsContext;
  filters: listener.Filter[];
}

/** The TCP listeners of the merged ports, then the QUIC listeners of the ports served over HTTP/3 too. */
export function buildGatewayListeners(input: RouterInput): listener.Listener[] {
  return [...listenersFor(input, input.ports, false), ...listenersFor(input, input.quicPorts ?? [], true)];
}

/**
 * One listener per address and port; unprivileged pods cannot listen below 1024. Merged ports that
 * share an address (HTTPS and TLS servers on one port form two) share one listener, their chains told
 * apart by SNI, as Istio merges them: Envoy rejects two listeners with one name.
 */
function listenersFor(input: RouterInput, ports: readonly GatewayPortInput[], quic: boolean): listener.Listener[] {
  const unprivileged = input.proxy.metadata.UNPRIVILEGED_POD === true;
  const byName = new Map<string, { bind: string; port: number; chains: ChainOpts[] }>();
  for (const { port, servers } of ports) {
    if ((unprivileged && port.number < 1024) || servers.length === 0) continue;
    const bind = port.bind || wildcardAddress(input.proxy);
    const name = `${quic ? "udp_" : ""}${listenerName(bind, port.number)}`;
    const entry = byName.get(name) ?? { bind, port: port.number, chains: [] };
    entry.chains.push(...(quic ? http3Chains : chainsFor)(input, name, port.number, servers));
    byName.set(name, entry);
  }
  // Istio omits a listener without chains (a TCP server no route binds to).
  return [...byName]
    .filter(([, entry]) => entry.chains.length > 0)
    .map(([name, entry]) => gatewayListener(input, name, entry.bind, entry.port, entry.chains, quic));
}

/**
 * HTTP/3 chains mirroring the servers' HTTPS chains on the TCP listener (gateway.go
 * buildGatewayHTTP3FilterChains): same SNI match and route, the TLS context for QUIC, the HTTP/3 codec.
 */
function http3Chains(
  input: RouterInput,
  name: string,
  port: number,
  servers: readonly GatewayServerInput[],
): ChainOpts[] {
  return servers.map((entry) => ({
    sniHosts: sniHostsOf(entry.server),
    applicationProtocols: [],
    tlsContext: gatewayTlsContext(entry.server.tls ?? {}, input.mesh, false, true),
    filters: [httpManager(input, entry, port, entry.server.name || `outbound_${name};`, true)],
  }));
}

function chainsFor(
  input: RouterInput,
  name: string,
  port: number,
  servers: readonly GatewayServerInput[],
): ChainOpts[] {
  // The first server decides the port's protocol (merging rejected servers that disagree).
  if (isHttpServer(servers[0].server)) {
    return [
      { sniHosts: [], applicationProtocols: [], filters: [httpManager(input, servers[0], port, `outbound_${name};`)] },
    ];
  }
  const chains: ChainOpts[] = [];
  const usedSni = new Set<string>();
  for (const entry of servers) {
    const { server } = entry;
    if (isHttpsTerminating(server)) {
      chains.push({
        sniHosts: sniHostsOf(server),
        applicationProtocols: [],
        tlsContext: gatewayTlsContext(server.tls ?? {}, input.mesh),
        filters: [httpManager(input, entry, port, server.name || `outbound_${name};`)],
      });
    } else if (serverTlsMode(server) === "AUTO_PASSTHROUGH") {
      chains.push(...autoPassthroughChains(input, server));
    } else if (serverTlsMode(server) === "PASSTHROUGH") {
      chains.push(...passthroughChains(input, entry, usedSni));
    } else {
      const filters = tcpRouteFilters(input, entry);
      if (filters.length === 0) continue;
      chains.push({
        sniHosts: sniHostsOf(server),
        applicationProtocols: [],
        tlsContext: server.tls ? gatewayTlsContext(server.tls, input.mesh, true) : undefined,
        filters,
      });
    }
  }
  return chains;
}

function httpManager(
  input: RouterInput,
  entry: GatewayServerInput,
  port: number,
  statPrefix: string,
  http3 = false,
): listener.Filter {
  const protocol = parseServerProtocol(entry.server.port.protocol);
  return buildHcmFilter(input, {
    listenerClass: "gateway",
    statPrefix,
    routes: { rds: gatewayRouteName(entry, port) },
    httpFilters: gatewayHttpFilters(input, protocol, port),
    protocol,
    http3,
  });
}

/** Per gateway build, its connection managers' HTTP filters by protocol and port. */
const HTTP_FILTERS_BY_BUILD = weakTable<RouterInput, Map<string, hcm.HttpFilter[]>>("listener/gatewayHttpFilters");

/**
 * The HTTP filters read only the build's policies besides the protocol and port, so the servers of a
 * port share one list, built once (their managers then share its encoding too).
 */
function gatewayHttpFilters(
  input: RouterInput,
  protocol: ReturnType<typeof parseServerProtocol>,
  port: number,
): hcm.HttpFilter[] {
  const httpFiltersByBuild = envMemos(input).weak(HTTP_FILTERS_BY_BUILD);
  let byKey = httpFiltersByBuild.get(input);
  if (!byKey) {
    byKey = new Map();
    httpFiltersByBuild.set(input, byKey);
  }
  const key = `${protocol} ${port}`;
  let filters = byKey.get(key);
  if (!filters) {
    filters = buildHttpFilters({
      ...input.policies,
      listenerClass: "gateway",
      protocol,
      port,
      persistentSessions: input.persistentSessions,
    });
    byKey.set(key, filters);
  }
  return filters;
}

/** A VirtualService applies to a server when one of its hosts matches a server host (`ns/` scoping respected). */
function bindsToServer(vs: VirtualService, server: GatewayServers): boolean {
  return (vs.spec?.hosts ?? []).some((vsHost) =>
    server.hosts.some((serverHost) => {
      let h = serverHost;
      if (h.includes("/")) {
        const [ns, rest] = h.split("/");
        if (ns !== "*" && ns !== "." && ns !== vsRef(vs).namespace) return false;
        h = rest;
      }
      return hostsMatch(h, vsHost);
    }),
  );
}

interface L4Match {
  port?: number;
  gateways?: string[];
}

function l4Matches(match: L4Match, server: GatewayServers, gateway: string): boolean {
  const portOk = !match.port || match.port === server.port.number;
  const gateways = match.gateways ?? [];
  return portOk && (gateways.length === 0 || gateways.includes(gateway));
}

/** The first VirtualService tcp rule that matches the server routes it (TLS-terminated or plain TCP). */
function tcpRouteFilters(input: RouterInput, entry: GatewayServerInput): listener.Filter[] {
  const gateway = entry.gatewayName;
  for (const vs of input.virtualServicesFor?.(gateway) ?? []) {
    if (!bindsToServer(vs, entry.server)) continue;
    for (const rule of vs.spec?.tcp ?? []) {
      const matches = rule.match ?? [];
      if (matches.length > 0 && !matches.some((m) => l4Matches(m, entry.server, gateway))) continue;
      if ((rule.route ?? []).length === 0) continue;
      const mx = entry.server.tls?.mode === "ISTIO_MUTUAL" ? [METADATA_EXCHANGE_NETWORK_FILTER] : [];
      return [
        ...mx,
        ...routeTcpFilters(
          { ...input, before: authzAndStats(input), statPortName: entry.server.port.name },
          vs,
          rule.route ?? [],
          entry.server.port.number,
          parseServerProtocol(entry.server.port.protocol),
        ),
      ];
    }
  }
  return [];
}

/** One chain per VirtualService tls match, SNI hosts not already taken on this port. */
function passthroughChains(input: RouterInput, entry: GatewayServerInput, usedSni: Set<string>): ChainOpts[] {
  const gateway = entry.gatewayName;
  const chains: ChainOpts[] = [];
  for (const vs of input.virtualServicesFor?.(gateway) ?? []) {
    if (!bindsToServer(vs, entry.server)) continue;
    for (const rule of vs.spec?.tls ?? []) {
      if ((rule.route ?? []).length === 0) continue;
      for (const match of rule.match ?? []) {
        if (!l4Matches(match, entry.server, gateway)) continue;
        const key = (h: string) => `${entry.server.bind ?? ""}|${h}`;
        if (match.sniHosts.some((h) => usedSni.has(key(h)))) continue;
        for (const h of match.sniHosts) usedSni.add(key(h));
        chains.push({
          sniHosts: match.sniHosts,
          applicationProtocols: [],
          filters: routeTcpFilters(
            { ...input, before: authzAndStats(input), statPortName: entry.server.port.name },
            vs,
            rule.route ?? [],
            entry.server.port.number,
            parseServerProtocol(entry.server.port.protocol),
          ),
        });
      }
    }
  }
  return chains;
}

/** Per service port (and DestinationRule subset) matching the server's hosts: SNI-DNAT to that cluster. */
function autoPassthroughChains(input: RouterInput, server: GatewayServers): ChainOpts[] {
  const hosts = sniHostsOf(server);
  const chains: ChainOpts[] = [];
  for (const service of input.services ?? []) {
    if (service.meshExternal || !hosts.some((h) => hostsMatch(h, service.hostname) && subsetOf(service.hostname, h))) {
      continue;
    }
    for (const port of service.ports) {
      if (port.protocol === "UDP") continue;
      const spec = input.destinationRuleFor?.(service.hostname);
      for (const subset of ["", ...(spec?.subsets ?? []).map((s) => s.name)]) {
        const cluster = `outbound_.${port.port}_.${subset}_.${service.hostname}`;
        const rule = spec && { spec, subset, tunnel: false };
        chains.push({
          sniHosts: [cluster],
          applicationProtocols: ALL_ISTIO_MTLS_ALPN,
          filters: [...stats(input), ...buildTcpFilterStack(input, port.protocol, { cluster }, rule)],
        });
      }
    }
  }
  return chains;
}

/** `name` is covered by the (possibly wildcard) `pattern`. */
function subsetOf(name: string, pattern: string): boolean {
  if (pattern === "*") return true;
  return pattern.startsWith("*") ? name.endsWith(pattern.slice(1)) : name === pattern;
}

/**
 * What runs before a VirtualService-routed TCP chain's terminal filters (networkfilter.go
 * buildCompleteNetworkFilters): the gateway's CUSTOM authz, its RBAC, then istio.stats.
 * AUTO_PASSTHROUGH chains have no authorization (Istio builds them without).
 */
function authzAndStats(input: RouterInput): listener.Filter[] {
  const { custom, enforced } = networkAuthzFilters(input.policies);
  return [...custom, ...enforced, ...stats(input)];
}

function stats(input: RouterInput): listener.Filter[] {
  return input.policies?.prometheusStats ? [tcpStatsFilter(input, "gateway")] : [];
}

/**
 * A gateway listener of TCP chains, or (`quic`) of HTTP/3 chains on UDP: QUIC has no PROXY protocol
 * header to strip and no TLS inspector, Envoy's QUIC stack reads the SNI itself.
 */
function gatewayListener(
  input: RouterInput,
  name: string,
  bind: string,
  port: number,
  chains: readonly ChainOpts[],
  quic: boolean,
): listener.Listener {
  const listenerFilters: listener.ListenerFilter[] = [];
  if (!quic && (input.proxyProtocol ?? gatewayTopology(input).proxyProtocol !== undefined)) {
    listenerFilters.push(proxyProtocolFilter());
  }
  const needsTls = chains.some(
    (c) => c.sniHosts.length > 0 || (c.tlsContext?.commonTlsContext?.alpnProtocols.length ?? 0) > 0,
  );
  if (needsTls && !quic) listenerFilters.push(tlsInspectorFilter());
  const address = socketAddress(bind, port);
  if (quic && address.address.case === "socketAddress") {
    address.address.value.protocol = core.SocketAddress_Protocol.UDP;
  }
  return create(listener.ListenerSchema, {
    name,
    address,
    trafficDirection: core.TrafficDirection.OUTBOUND,
    maxConnectionsToAcceptPerSocketEvent: 1,
    connectionBalanceConfig: quic ? undefined : connectionBalance(input.proxy, "outbound"),
    udpListenerConfig: quic
      ? create(listener.UdpListenerConfigSchema, {
          quicOptions: create(listener.QuicProtocolOptionsSchema),
          downstreamSocketConfig: create(core.UdpSocketConfigSchema),
        })
      : undefined,
    listenerFilters,
    filterChains: chains.map((c) => {
      const chain = newFilterChain(c.filters);
      chain.transportSocketConnectTimeout = TRANSPORT_SOCKET_CONNECT_TIMEOUT;
      const serverNames = c.sniHosts.includes("*") ? [] : [...c.sniHosts].sort();
      if (serverNames.length > 0 || c.applicationProtocols.length > 0) {
        chain.filterChainMatch = newFilterChainMatch();
        chain.filterChainMatch.serverNames = serverNames;
        chain.filterChainMatch.applicationProtocols = [...c.applicationProtocols];
      }
      if (c.tlsContext) chain.transportSocket = (quic ? downstreamQuicSocket : downstreamTlsSocket)(c.tlsContext);
      return chain;
    }),
    accessLog: buildListenerAccessLogs(input, "gateway"),
  });
}
