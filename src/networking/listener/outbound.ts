// Sidecar outbound listeners (listener.go buildSidecarOutboundListeners, tls.go): one listener per
// (bind, port) — HTTP ports share `0.0.0.0_<port>` and route by RDS `<port>`; TCP and undeclared
// (sniffed) ports listen on the service VIP; conflicting services on one key merge as Istio merges
// them. Then the HTTP proxy listener, if configured, and virtualOutbound.
import { isIP } from "node:net";
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { core, type hcm, listener, packAny, sniDfp } from "../../api/index.ts";
import { parseProtocol } from "../../config/index.ts";
import type { Destination, SidecarEgress } from "../../config/types/index.ts";
import { hostsMatch, resolveShortName } from "../../model/index.ts";
import type { Service, ServiceProtocol } from "../../registry/index.ts";
import { statPrefix } from "../cluster/index.ts";
import { allowAnyDnsCache, forwardProxyDnsCache, isDynamicForwardProxy, SNI_DFP_NETWORK_FILTER } from "../dfp.ts";
import { EXTENSION_PHASES, extensionNetworkFilters } from "../extension/index.ts";
import { buildHttpFilters } from "../httpfilter/index.ts";
import {
  connectionBalance,
  listenerName,
  localhostAddress,
  protocolDetectionTimeout,
  socketAddress,
  wildcardAddress,
} from "./address.ts";
import { buildHcmFilter } from "./hcm.ts";
import { cidrRangeMessage, newFilterChain, newFilterChainMatch, newListener } from "./message.ts";
import { PLAINTEXT_HTTP_ALPN, protocolClass, RAW_BUFFER_TRANSPORT, sniffingListenerFilters } from "./sniffing.ts";
import { buildTcpFilterStack, type RouteContext, routeTcpFilters, type TcpDestination, tcpStatsFilter } from "./tcp.ts";
import { interceptionMode, type ListenerEnv, type VirtualService, vsRef } from "./types.ts";
import { buildVirtualOutboundListener, catchAllTcpFilters } from "./virtual.ts";

/**
 * A Sidecar `egress` listener with the services its hosts import. Without a port it is the catch-all:
 * every port of its services, except ports an earlier egress listener took.
 */
export interface EgressListenerInput {
  /** The Sidecar's egress entry (port, bind, captureMode); undefined for the default catch-all. */
  egress?: SidecarEgress;
  services: readonly Service[];
  /** VirtualServices bound to the mesh that this listener imports, in precedence order. */
  virtualServices?: readonly VirtualService[];
}

export interface SidecarOutboundInput extends ListenerEnv {
  /** The services visible to the proxy (after Sidecar egress and exportTo), oldest first. */
  services: readonly Service[];
  /** VirtualServices bound to the mesh, in precedence order (with no egressListeners). */
  virtualServices?: readonly VirtualService[];
  /**
   * The Sidecar's egress listeners in order, the catch-all last (model's SidecarScope egress listeners
   * fit as they are); absent: one catch-all over `services` and `virtualServices`.
   */
  egressListeners?: readonly EgressListenerInput[];
  /** Endpoint IPs of a headless (Passthrough, no VIP) service port: each gets its own listener. */
  endpointAddressesFor?: (service: Service, port: number) => readonly string[];
  /** REGISTRY_ONLY after Sidecar outboundTrafficPolicy (default: the mesh's). */
  registryOnly?: boolean;
  /** Sidecar outboundTrafficPolicy egressProxy (ALLOW_ANY): the catch-all's destination. */
  egressProxy?: Destination;
  /** A Prometheus metrics provider applies: istio.stats on chains. */
  prometheusStats?: boolean;
  /** The cluster DNS suffix that short VirtualService hosts resolve under. */
  domainSuffix?: string;
  /** The DestinationRule of a visible service's host: tcp_proxy settings and tunnel (see TcpProxyRule). */
  destinationRuleFor?: RouteContext["destinationRuleFor"];
  /** outboundTrafficPolicy ALLOW_ANY_DYNAMIC_DNS: HTTP to unknown hosts goes through the dynamic forward proxy. */
  allowAnyDynamicDns?: boolean;
}

/** Per-port outbound listeners, then the HTTP proxy listener (if any), then virtualOutbound (if captured). */
export function buildSidecarOutboundListeners(input: SidecarOutboundInput): listener.Listener[] {
  const entries = new Map<string, Entry>();
  const noneMode = interceptionMode(input.proxy) === "NONE";
  const egressListeners = input.egressListeners ?? [
    { services: input.services, virtualServices: input.virtualServices },
  ];
  for (const { egress, services, virtualServices = [] } of egressListeners) {
    // Capture mode NONE (the proxy's or the listener's) binds a real port, on localhost unless a bind is given.
    const bindToPort = noneMode || egress?.captureMode === "NONE";
    const binding: Binding = {
      bind: egress?.bind || (bindToPort ? localhostAddress(input.proxy) : ""),
      bindToPort,
      virtualServices,
    };
    const egressPort = egress?.port?.number;
    if (egressPort) {
      const protocol: ServiceProtocol = parseProtocol(egress?.port?.protocol ?? "") ?? "UnsupportedProtocol";
      for (const service of services) addServicePort(input, entries, service, egressPort, protocol, binding);
      continue;
    }
    // The catch-all adds nothing to listeners an explicit egress port defined.
    for (const entry of entries.values()) entry.locked = true;
    for (const service of services) {
      for (const port of service.ports) addServicePort(input, entries, service, port.port, port.protocol, binding);
    }
  }
  const httpFilters = outboundHttpFilters(input);
  const listeners = [...entries.values()].map((entry) => listenerFromEntry(input, entry, httpFilters));
  const httpProxy = httpProxyListener(input, httpFilters);
  if (httpProxy) listeners.push(httpProxy);
  const virtual = buildVirtualOutboundListener(input, {
    registryOnly: input.registryOnly,
    egressProxy: input.egressProxy,
    prometheusStats: input.prometheusStats,
    allowAnyDynamicDns: input.allowAnyDynamicDns,
  });
  if (virtual) listeners.push(virtual);
  return listeners;
}

/** One filter chain before it becomes Envoy's: what it matches and what it runs. */
interface ChainOpts {
  sniHosts: readonly string[];
  destinationCidrs: readonly string[];
  applicationProtocols: readonly string[];
  transportProtocol: string;
  metadata?: core.Metadata;
  /**
   * An HTTP chain (HCM over RDS) or a TCP chain (these network filters). An HTTP chain made for a
   * DYNAMIC_DNS wildcard host resolves it with the dynamic forward proxy filter.
   */
  http?: { rds: string; protocol: ServiceProtocol; forwardProxyHost?: string };
  networkFilters?: listener.Filter[];
}

/** Where a listener binds: an explicit address ("" = the service's VIP or the wildcard) and whether it owns the port. */
interface Binding {
  bind: string;
  bindToPort: boolean;
  /** The VirtualServices the egress listener imports. */
  virtualServices: readonly VirtualService[];
}

interface Entry {
  /** Made by an explicit Sidecar egress port: the catch-all leaves it alone. */
  locked: boolean;
  bind: string;
  port: number;
  bindToPort: boolean;
  /** HTTP, TCP, or Auto once HTTP and TCP chains share it. */
  kind: "http" | "tcp" | "auto";
  /** The protocol as declared (well-known server-first protocols never share a listener). */
  protocol: ServiceProtocol;
  chains: ChainOpts[];
}

function addServicePort(
  input: SidecarOutboundInput,
  entries: Map<string, Entry>,
  service: Service,
  port: number,
  protocol: ServiceProtocol,
  binding: Binding,
): void {
  if (service.resolution === "Alias" || protocolClass(protocol) === "udp") return;
  for (const { bind, cidrs } of bindsFor(input, service, port, protocol, binding)) {
    addBinding(input, entries, service, port, protocol, bind, cidrs, binding);
  }
}

/** Where a service port listens (listener.go buildSidecarOutboundListener): an explicit bind, else by protocol. */
function bindsFor(
  input: SidecarOutboundInput,
  service: Service,
  port: number,
  protocol: ServiceProtocol,
  binding: Binding,
): { bind: string; cidrs: readonly string[] }[] {
  const wildcard = wildcardAddress(input.proxy);
  if (binding.bind !== "") return [{ bind: binding.bind, cidrs: [] }];
  // HTTP services share the wildcard listener and are told apart by Host.
  if (protocolClass(protocol) === "http") return [{ bind: wildcard, cidrs: [] }];
  const address = service.defaultAddress;
  if (service.resolution === "Passthrough" && address === "0.0.0.0") {
    const endpoints = (input.endpointAddressesFor?.(service, port) ?? []).filter((ip) => isIP(ip) !== 0);
    if (endpoints.length > 0) {
      return endpoints.filter((ip) => ip !== input.proxy.ipAddresses[0]).map((ip) => ({ bind: ip, cidrs: [] }));
    }
    // A ServiceEntry NONE with no workloads: a wildcard listener. A Kubernetes headless service with
    // no endpoints (or one that selects workloads) gets nothing until it has some.
    return service.registry === "External" && service.selector === null ? [{ bind: wildcard, cidrs: [] }] : [];
  }
  // Istio makes a service of each address of a ServiceEntry (convertServices): each listens apart.
  const addresses = service.registry === "External" && service.addresses.length > 1 ? service.addresses : [address];
  // A CIDR address: the wildcard listener, matched by destination prefix.
  return addresses.map((a) => (a.includes("/") ? { bind: wildcard, cidrs: [a] } : { bind: a, cidrs: [] }));
}

const SERVER_FIRST: ReadonlySet<ServiceProtocol> = new Set(["Mongo", "MySQL"]);

function addBinding(
  input: SidecarOutboundInput,
  entries: Map<string, Entry>,
  service: Service,
  port: number,
  protocol: ServiceProtocol,
  bind: string,
  cidrs: readonly string[],
  binding: Binding,
): void {
  const { bindToPort } = binding;
  const key = listenerName(bind, port);
  const current = entries.get(key);
  if (current?.locked) return;
  // A chain whose match the listener has already is dropped (Istio's mergeTCPFilterChains reports it).
  const conflict: Conflict = {
    input,
    key,
    accepted: current?.protocol,
    rejected: protocol,
    hostname: service.hostname,
  };
  const cls = protocolClass(protocol);
  const wildcard = bind === wildcardAddress(input.proxy);
  // Sniffing would break a server-first protocol: it never shares a listener with HTTP.
  if (current && current.kind !== cls && (SERVER_FIRST.has(protocol) || SERVER_FIRST.has(current.protocol))) return;

  if (cls === "http") {
    if (current && current.kind !== "tcp") return; // the HTTP chain (RDS per port) already serves it
    const http = httpChain(String(port), protocol, wildcard);
    if (http.http && isDynamicForwardProxy(service)) http.http.forwardProxyHost = service.hostname;
    if (!current) {
      // On the wildcard the HTTP chain matches sniffed HTTP; anything else falls to the passthrough chain.
      entries.set(key, {
        locked: false,
        bind,
        port,
        bindToPort,
        kind: wildcard ? "auto" : "http",
        protocol,
        chains: [http],
      });
      return;
    }
    mergeChains(current, [http], conflict);
    current.kind = "auto";
    return;
  }

  const tcp = tcpChains(input, service, port, protocol, bind, cidrs, binding.virtualServices);
  if (cls === "tcp") {
    if (!current) {
      entries.set(key, { locked: false, bind, port, bindToPort, kind: "tcp", protocol, chains: tcp });
      return;
    }
    mergeChains(current, tcp, conflict);
    if (current.kind === "http") current.kind = "auto";
    return;
  }

  // Auto: a TCP chain for what is not HTTP, and an HTTP chain for the service alone when on its VIP.
  if (current && current.kind !== "http") {
    mergeChains(current, tcp, conflict);
    if (current.kind === "tcp") {
      mergeChains(current, [httpChain(rdsForAuto(service, port, wildcard), protocol, true)], conflict);
      current.kind = "auto";
    }
    return;
  }
  const chains = [...tcp, httpChain(rdsForAuto(service, port, wildcard), protocol, true)];
  entries.set(key, { locked: false, bind, port, bindToPort, kind: "auto", protocol, chains });
}

/** A sniffed service on its own VIP has its own route configuration `<host>:<port>`. */
function rdsForAuto(service: Service, port: number, wildcard: boolean): string {
  return wildcard ? String(port) : `${service.hostname}:${port}`;
}

function httpChain(rds: string, protocol: ServiceProtocol, sniffed: boolean): ChainOpts {
  return {
    sniHosts: [],
    destinationCidrs: [],
    applicationProtocols: sniffed ? PLAINTEXT_HTTP_ALPN : [],
    transportProtocol: sniffed ? RAW_BUFFER_TRANSPORT : "",
    http: { rds, protocol },
  };
}

/** What a dropped chain is reported as (Istio's pilot_conflict_outbound_listener_tcp_over_current_tcp). */
interface Conflict {
  input: SidecarOutboundInput;
  key: string;
  accepted: ServiceProtocol | undefined;
  rejected: ServiceProtocol;
  hostname: string;
}

/** Adds chains whose match no existing chain has (Istio keeps the first on a tie, a conflict). */
function mergeChains(entry: Entry, incoming: readonly ChainOpts[], conflict: Conflict): void {
  for (const chain of incoming) {
    if (entry.chains.some((existing) => sameMatch(existing, chain))) reportConflict(conflict);
    else entry.chains.push(chain);
  }
}

function reportConflict({ input, key, accepted, rejected, hostname }: Conflict): void {
  input.report?.(
    "pilot_conflict_outbound_listener_tcp_over_current_tcp",
    key,
    `Listener=${key} Accepted=${protocolName(accepted)} Rejected=${protocolName(rejected)} (${hostname})`,
  );
}

/** A protocol as Istio's conflict messages name it. */
function protocolName(protocol: ServiceProtocol | undefined): string {
  const cls = protocol && protocolClass(protocol);
  return cls === "http" ? "HTTP" : cls === "tcp" ? "TCP" : "UNKNOWN";
}

function sameMatch(a: ChainOpts, b: ChainOpts): boolean {
  return (
    sameValues(a.sniHosts, b.sniHosts) &&
    sameValues(a.destinationCidrs, b.destinationCidrs) &&
    sameValues(a.applicationProtocols, b.applicationProtocols) &&
    a.transportProtocol === b.transportProtocol
  );
}

/** The same strings in any order (a listener compares each new chain with all of its chains: sort only when needed). */
function sameValues(x: readonly string[], y: readonly string[]): boolean {
  if (x.length !== y.length) return false;
  if (x.length === 0) return true;
  const sortedY = [...y].sort();
  return [...x].sort().every((v, i) => v === sortedY[i]);
}

function isMatchAll(chain: ChainOpts): boolean {
  return (
    chain.sniHosts.length === 0 &&
    chain.destinationCidrs.length === 0 &&
    chain.applicationProtocols.length === 0 &&
    chain.transportProtocol === ""
  );
}

// ---- TCP and TLS chains (tls.go)

function tcpChains(
  input: SidecarOutboundInput,
  service: Service,
  port: number,
  protocol: ServiceProtocol,
  bind: string,
  cidrs: readonly string[],
  imported: readonly VirtualService[],
): ChainOpts[] {
  const suffix = input.domainSuffix ?? "cluster.local";
  // The VirtualServices for this host (Istio's getConfigsForHost).
  const virtualServices = imported.filter((vs) =>
    (vs.spec?.hosts ?? []).some((h) => hostsMatch(resolveShortName(h, vsRef(vs).namespace, suffix), service.hostname)),
  );
  return protocol === "HTTPS" || protocol === "TLS"
    ? tlsChains(input, service, port, protocol, bind, cidrs, virtualServices)
    : plainTcpChains(input, service, port, protocol, cidrs, virtualServices);
}

/** One chain per distinct TLS match (SNI hosts, subnets) of the VirtualServices; else one to the service. */
function tlsChains(
  input: SidecarOutboundInput,
  service: Service,
  port: number,
  protocol: ServiceProtocol,
  bind: string,
  cidrs: readonly string[],
  virtualServices: readonly VirtualService[],
): ChainOpts[] {
  const out: ChainOpts[] = [];
  const handled = new Set<string>();
  for (const vs of virtualServices) {
    for (const rule of vs.spec?.tls ?? []) {
      if ((rule.route ?? []).length === 0) continue;
      for (const match of rule.match ?? []) {
        if (!matchesProxy(input, match, port)) continue;
        const subnets = (match.destinationSubnets ?? []).length > 0 ? (match.destinationSubnets ?? []) : cidrs;
        const key = JSON.stringify([[...match.sniHosts].sort(), [...(match.destinationSubnets ?? [])].sort()]);
        if (handled.has(key)) continue;
        handled.add(key);
        out.push(
          tcpChain(
            match.sniHosts,
            subnets,
            routeTcpFilters(routeContext(input, service, port), vs, rule.route ?? [], port, protocol),
            vs,
          ),
        );
      }
    }
  }
  if (out.length > 0) return out;
  const wildcard = wildcardAddress(input.proxy);
  const address = service.defaultAddress.includes("/") ? "" : service.defaultAddress;
  // Without a VIP of its own the service is told apart by SNI.
  const needsSni =
    cidrs.length > 0 ||
    address === "" ||
    (address === wildcard && bind === wildcard) ||
    (service.hostname.startsWith("*") && service.resolution === "DynamicDNS");
  return [tcpChain(needsSni ? [service.hostname] : [], cidrs, serviceFilters(input, service, port, protocol))];
}

/**
 * VirtualService tcp rules: the first rule without match (or with a match without subnets) ends the
 * list; matches with destination subnets add chains for them. Else one chain to the service.
 */
function plainTcpChains(
  input: SidecarOutboundInput,
  service: Service,
  port: number,
  protocol: ServiceProtocol,
  cidrs: readonly string[],
  virtualServices: readonly VirtualService[],
): ChainOpts[] {
  const out: ChainOpts[] = [];
  for (const vs of virtualServices) {
    for (const rule of vs.spec?.tcp ?? []) {
      const routes = rule.route ?? [];
      if (routes.length === 0) continue;
      if ((rule.match ?? []).length === 0) {
        out.push(
          tcpChain([], cidrs, routeTcpFilters(routeContext(input, service, port), vs, routes, port, protocol), vs),
        );
        return out;
      }
      const subnets: string[] = [];
      for (const match of rule.match ?? []) {
        if (!matchesProxy(input, match, port)) continue;
        if ((match.destinationSubnets ?? []).length === 0) {
          out.push(
            tcpChain([], cidrs, routeTcpFilters(routeContext(input, service, port), vs, routes, port, protocol), vs),
          );
          return out;
        }
        subnets.push(...(match.destinationSubnets ?? []));
      }
      if (subnets.length > 0) {
        out.push(
          tcpChain([], subnets, routeTcpFilters(routeContext(input, service, port), vs, routes, port, protocol)),
        );
        if ([...subnets].sort().join() === [...cidrs].sort().join()) return out;
      }
    }
  }
  out.push(tcpChain([], cidrs, serviceFilters(input, service, port, protocol)));
  return out;
}

export interface ProxyMatch {
  port?: number;
  gateways?: string[];
  sourceLabels?: Record<string, string>;
  sourceNamespace?: string;
}

/** A tcp/tls match applies to this sidecar: its port, the mesh gateway, the proxy's labels and namespace. */
function matchesProxy(input: SidecarOutboundInput, match: ProxyMatch, port: number): boolean {
  return l4MatchApplies(match, port, input.proxy.labels, input.proxy.configNamespace);
}

/**
 * A tcp/tls match applies on `port` through the mesh gateway to a client with `labels` in `namespace`
 * (Istio's matchTCP and matchTLS; a waypoint knows neither: no labels, namespace "").
 */
export function l4MatchApplies(
  match: ProxyMatch,
  port: number,
  labels: Readonly<Record<string, string>>,
  namespace: string,
): boolean {
  if (match.port !== undefined && match.port !== 0 && match.port !== port) return false;
  if ((match.gateways ?? []).length > 0 && !match.gateways?.includes("mesh")) return false;
  if (!Object.entries(match.sourceLabels ?? {}).every(([k, v]) => labels[k] === v)) return false;
  return !match.sourceNamespace || match.sourceNamespace === namespace;
}

function tcpChain(
  sniHosts: readonly string[],
  cidrs: readonly string[],
  filters: listener.Filter[],
  vs?: VirtualService,
): ChainOpts {
  return {
    sniHosts,
    destinationCidrs: cidrs,
    applicationProtocols: [],
    transportProtocol: "",
    networkFilters: filters,
    metadata: vs ? configMetadata(vs) : undefined,
  };
}

/** Where Istio records which config built a chain (util.AddConfigInfoMetadata). */
function configMetadata(vs: VirtualService): core.Metadata {
  return create(core.MetadataSchema, {
    filterMetadata: {
      istio: {
        config: `/apis/networking.istio.io/v1/namespaces/${vsRef(vs).namespace}/virtual-service/${vsRef(vs).name}`,
      },
    },
  });
}

/** What a VirtualService route on the service's `port` reads; stat names know the port by the service's name for it. */
function routeContext(input: SidecarOutboundInput, service: Service, port: number): RouteContext {
  const statPortName = service.ports.find((p) => p.port === port)?.name ?? "";
  return { ...input, before: beforeTcpProxy(input, port), statPortName };
}

/** The NETWORK extensions, phase by phase, then istio.stats (buildCompleteNetworkFilters, no authz outbound). */
function beforeTcpProxy(input: SidecarOutboundInput, port: number): listener.Filter[] {
  return [
    ...extensionNetworkFilters(input.extensions, EXTENSION_PHASES, "sidecarOutbound", port),
    ...(input.prometheusStats ? [tcpStatsFilter(input, "sidecarOutbound")] : []),
  ];
}

/**
 * tcp_proxy (with the protocol's filter) to the service; a single-port service is always reached on
 * that port. A DYNAMIC_DNS wildcard host is resolved from the SNI first, into the DNS cache its
 * cluster reads.
 */
function serviceFilters(
  input: SidecarOutboundInput,
  service: Service,
  port: number,
  protocol: ServiceProtocol,
): listener.Filter[] {
  const target = service.ports.length === 1 ? service.ports[0].port : port;
  const spec = input.destinationRuleFor?.(service.hostname);
  const rule = spec && { spec, subset: "", tunnel: true };
  const forwardProxy = isDynamicForwardProxy(service) ? [sniForwardProxyFilter(input, service, port)] : [];
  return [
    ...beforeTcpProxy(input, port),
    ...forwardProxy,
    ...buildTcpFilterStack(input, protocol, serviceDestination(input, service, target, port), rule),
  ];
}

/**
 * tcp_proxy's destination for a service: its cluster, the stat prefix the cluster's name unless the
 * mesh names outbound stats (then that pattern for the listener's port, no port name or target port).
 */
function serviceDestination(
  input: SidecarOutboundInput,
  service: Service,
  clusterPort: number,
  listenerPort: number,
): TcpDestination {
  const cluster = `outbound|${clusterPort}||${service.hostname}`;
  const pattern = input.mesh.outboundClusterStatName;
  if (!pattern) return { cluster };
  return { cluster, statPrefix: statPrefix(pattern, { service, subset: "", port: listenerPort, portName: "" }) };
}

/** envoy.filters.network.sni_dynamic_forward_proxy (Istio's buildSNIDFPFilter): connects to the SNI at the listener port. */
function sniForwardProxyFilter(input: SidecarOutboundInput, service: Service, port: number): listener.Filter {
  const config = create(sniDfp.FilterConfigSchema, {
    dnsCacheConfig: forwardProxyDnsCache(service.hostname, input.proxy.ipAddresses),
    portSpecifier: { case: "portValue", value: port },
  });
  return create(listener.FilterSchema, {
    name: SNI_DFP_NETWORK_FILTER,
    configType: { case: "typedConfig", value: packAny(sniDfp.FilterConfigSchema, config) },
  });
}

// ---- From entries to Envoy listeners (listener.go buildListenerFromEntry)

/** The HTTP filters of an outbound connection manager on a port, for its protocol and dynamic forward proxy host. */
type OutboundHttpFilters = (protocol: ServiceProtocol, port: number, forwardProxyHost?: string) => hcm.HttpFilter[];

/**
 * Everything else the filters read is the same for every outbound listener, so the connection
 * managers of one (protocol, port, host) share one filter list, built once.
 */
function outboundHttpFilters(input: SidecarOutboundInput): OutboundHttpFilters {
  const built = new Map<string, hcm.HttpFilter[]>();
  return (protocol, port, forwardProxyHost) => {
    const key = `${protocol} ${port} ${forwardProxyHost ?? ""}`;
    let filters = built.get(key);
    if (!filters) {
      filters = buildHttpFilters({
        listenerClass: "sidecarOutbound",
        protocol,
        persistentSessions: input.persistentSessions,
        prometheusStats: input.prometheusStats,
        telemetry: input.telemetry,
        extensions: input.extensions,
        port,
        forwardProxyDnsCache:
          forwardProxyHost !== undefined ? forwardProxyDnsCache(forwardProxyHost, input.proxy.ipAddresses) : undefined,
        allowAnyDnsCache: allowAnyCache(input),
      });
      built.set(key, filters);
    }
    return filters;
  };
}

/** Per-port listeners carry no listener access log: virtualOutbound's records what no chain matched. */
function listenerFromEntry(
  input: SidecarOutboundInput,
  entry: Entry,
  httpFilters: OutboundHttpFilters,
): listener.Listener {
  const name = listenerName(entry.bind, entry.port);
  const l = newListener(name);
  l.address = socketAddress(entry.bind, entry.port);
  l.trafficDirection = core.TrafficDirection.OUTBOUND;
  l.continueOnListenerFiltersTimeout = true;
  const balance = connectionBalance(input.proxy, "outbound");
  if (balance) l.connectionBalanceConfig = balance;
  if (entry.bindToPort) l.maxConnectionsToAcceptPerSocketEvent = 1;
  else l.bindToPort = false;

  let defaultChain: listener.FilterChain | undefined;
  for (const opts of entry.chains) {
    const chain = newFilterChain(
      opts.http
        ? [
            ...extensionNetworkFilters(input.extensions, EXTENSION_PHASES, "sidecarOutbound", entry.port),
            buildHcmFilter(input, {
              listenerClass: "sidecarOutbound",
              statPrefix: `outbound_${name};`,
              routes: { rds: opts.http.rds },
              httpFilters: httpFilters(opts.http.protocol, entry.port, opts.http.forwardProxyHost),
              protocol: opts.http.protocol,
            }),
          ]
        : [...(opts.networkFilters ?? [])],
    );
    if (opts.metadata) chain.metadata = opts.metadata;
    chain.transportSocketConnectTimeout = TRANSPORT_SOCKET_CONNECT_TIMEOUT;
    if (isMatchAll(opts)) {
      defaultChain = chain;
    } else {
      chain.filterChainMatch = filterChainMatch(opts);
      l.filterChains.push(chain);
    }
  }
  if (defaultChain && l.filterChains.length === 0) {
    l.filterChains.push(defaultChain);
  } else if (defaultChain) {
    l.defaultFilterChain = defaultChain;
  } else {
    l.defaultFilterChain = newFilterChain(
      catchAllTcpFilters(input, {
        registryOnly: input.registryOnly,
        egressProxy: input.egressProxy,
        prometheusStats: input.prometheusStats,
      }),
      "PassthroughFilterChain",
    );
    l.defaultFilterChain.filterChainMatch = newFilterChainMatch();
  }
  l.listenerFilters = sniffingListenerFilters(l.filterChains);
  const sniffsHttp = l.listenerFilters.some((f) => f.name === "envoy.filters.listener.http_inspector");
  l.listenerFiltersTimeout = sniffsHttp ? protocolDetectionTimeout(input) : NO_TIMEOUT;
  return l;
}

/** PILOT_GATEWAY_TRANSPORT_SOCKET_CONNECT_TIMEOUT: a slow TLS handshake cannot hold a connection open. */
const TRANSPORT_SOCKET_CONNECT_TIMEOUT = create(DurationSchema, { seconds: 15n });
const NO_TIMEOUT = create(DurationSchema, {});

function filterChainMatch(opts: ChainOpts): listener.FilterChainMatch {
  const match = newFilterChainMatch();
  match.transportProtocol = opts.transportProtocol;
  match.applicationProtocols = [...opts.applicationProtocols];
  if (!opts.sniHosts.includes("*")) match.serverNames = [...opts.sniHosts].sort();
  match.prefixRanges = [...opts.destinationCidrs]
    .filter((c) => c !== "0.0.0.0" && c !== "0.0.0.0/0")
    .sort()
    .map(cidrRange);
  return match;
}

function cidrRange(cidr: string): core.CidrRange {
  const [address, length] = cidr.split("/");
  const prefixLen = length === undefined ? (isIP(address) === 6 ? 128 : 32) : Number(length);
  return cidrRangeMessage(address, prefixLen);
}

/** meshConfig.proxyHttpPort or node HTTP_PROXY_PORT: an HTTP proxy on localhost routed by `http_proxy`. */
/** Under ALLOW_ANY_DYNAMIC_DNS every outbound connection manager resolves unknown hosts (the catch-all virtual host's cluster). */
function allowAnyCache(input: SidecarOutboundInput) {
  return input.allowAnyDynamicDns ? allowAnyDnsCache(input.proxy) : undefined;
}

function httpProxyListener(
  input: SidecarOutboundInput,
  httpFilters: OutboundHttpFilters,
): listener.Listener | undefined {
  const port = Number(input.proxy.metadata.HTTP_PROXY_PORT || input.mesh.proxyHttpPort || 0);
  if (!Number.isInteger(port) || port <= 0) return undefined;
  const bind = localhostAddress(input.proxy);
  const name = listenerName(bind, port);
  const hcmFilter = buildHcmFilter(input, {
    listenerClass: "sidecarOutbound",
    statPrefix: `outbound_${name};`,
    routes: { rds: "http_proxy" },
    httpFilters: httpFilters("HTTP_PROXY", port),
    protocol: "HTTP_PROXY",
    httpProxy: true,
  });
  const chain = newFilterChain([hcmFilter]);
  chain.transportSocketConnectTimeout = TRANSPORT_SOCKET_CONNECT_TIMEOUT;
  return create(listener.ListenerSchema, {
    name,
    address: socketAddress(bind, port),
    trafficDirection: core.TrafficDirection.OUTBOUND,
    continueOnListenerFiltersTimeout: true,
    maxConnectionsToAcceptPerSocketEvent: 1,
    listenerFiltersTimeout: NO_TIMEOUT,
    filterChains: [chain],
  });
}
