// Sidecar inbound (listener_inbound.go): per target port of the workload, the filter chains its
// mTLS mode and protocol call for (filterchain-match.ts), HTTP through an HCM with an inline route to
// `inbound|<port>||`, TCP through tcp_proxy; passthrough chains for ports no service declares; all in
// virtualInbound, or in real per-port listeners when nothing is redirected (interception NONE).
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { core, listener, preEncoded, route } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { ServerTlsSettings } from "../../config/types/index.ts";
import type { ProxyNode, PushStatusReporter } from "../../model/index.ts";
import type { ServiceProtocol } from "../../registry/index.ts";
import { weakTable } from "../../util/index.ts";
import { buildTcpAuthzFilters } from "../authz/index.ts";
import { expandStatPattern } from "../cluster/index.ts";
import { EXTENSION_PHASES, type ExtensionPhase, extensionNetworkFilters } from "../extension/index.ts";
import { buildHttpFilters, type HttpFilterContext } from "../httpfilter/index.ts";
import { buildListenerAccessLogs } from "./accesslog.ts";
import {
  connectionBalance,
  isGlobalUnicast,
  listenerName,
  protocolDetectionTimeout,
  socketAddress,
  wildcardAddress,
} from "./address.ts";
import { type InboundChainOption, inboundChainOptions } from "./filterchain-match.ts";
import { buildHcmFilter } from "./hcm.ts";
import { newFilterChain, newFilterChainMatch } from "./message.ts";
import { inboundInspectors, protocolClass } from "./sniffing.ts";
import {
  BLACKHOLE_TCP_PROXY,
  buildTcpFilterStack,
  INBOUND_PASSTHROUGH_CLUSTER,
  METADATA_EXCHANGE_NETWORK_FILTER,
  tcpStatsFilter,
} from "./tcp.ts";
import { downstreamTlsSocket, gatewayTlsContext, inboundMtlsContext } from "./tls.ts";
import { envMemos, interceptionMode, type ListenerEnv, type MtlsMode } from "./types.ts";
import { buildVirtualInboundListener, VIRTUAL_INBOUND } from "./virtual.ts";

/** One port the workload serves: a Service port's resolved target port (or a Sidecar ingress port). */
export interface InboundPort {
  /** The port on the workload. */
  targetPort: number;
  /** The Service port (route vhost `inbound|http|<port>` and span names). */
  servicePort: number;
  protocol: ServiceProtocol;
  /** The Service's hostname, for span names. */
  hostname: string;
  /** The Service port's name (the mesh's inboundClusterStatName %SERVICE_PORT_NAME%). */
  portName?: string;
  /** The Kubernetes Service (not a ServiceEntry or a Sidecar), by which the stat name knows it. */
  kubernetesService?: { name: string; namespace: string };
  /** Sidecar ingress `captureMode: NONE`: a real listener on this port even when traffic is redirected. */
  bindToPort?: boolean;
  /** Sidecar ingress `bind` for such a listener (default: the pod's IP). */
  bind?: string;
  /**
   * The Sidecar whose ingress declares the port: its chains bind to the pod's IP when `bind` is unset
   * and name the Sidecar in their metadata (Istio's inboundChainConfig.configMetadata).
   */
  sidecar?: { name: string; namespace: string };
  /**
   * Sidecar ingress `tls` (ENABLE_TLS_ON_SIDECAR_INGRESS): the sidecar terminates the application's own
   * TLS. Used only where the port's mTLS mode is DISABLE, as in Istio.
   */
  tls?: ServerTlsSettings;
}

/** The policies the inbound filters are built from: authentication, authorization, metrics. */
export type InboundPolicies = Omit<HttpFilterContext, "listenerClass" | "protocol">;

export interface SidecarInboundInput extends ListenerEnv {
  /** The workload's ports; a target port listed twice keeps the first (the oldest Service, as Istio). */
  ports: readonly InboundPort[];
  /**
   * PeerAuthentication's effective mTLS for the workload (the model's EffectiveMtls fits): `mode` for
   * ports without a port-level setting and for the passthrough chains; `perPort` by workload port, where
   * a port no Service declares gets passthrough chains of its own.
   */
  mtls: { mode: MtlsMode; perPort: ReadonlyMap<number, MtlsMode> };
  /** The trust domain and its aliases: peers whose SPIFFE id is in one of them are accepted. */
  trustDomains: readonly string[];
  policies?: InboundPolicies;
}

/** What one set of chains serves: a declared port, or passthrough (any port, or one undeclared port). */
interface ChainConfig {
  targetPort: number;
  tls?: ServerTlsSettings;
  servicePort: number;
  protocol: ServiceProtocol;
  hostname: string;
  /** The port's name and Kubernetes Service, for the mesh's inboundClusterStatName. */
  portName: string;
  kubernetesService?: { name: string; namespace: string };
  cluster: string;
  passthrough: boolean;
  bind: string;
  /** `filter_metadata.istio.config` of the chains: the Sidecar that declared the port. */
  configPath?: string;
}

/** virtualInbound (or per-port listeners under interception NONE). */
export function buildSidecarInboundListeners(input: SidecarInboundInput): listener.Listener[] {
  reportInboundConflicts(input.ports, input.proxy.id, input.report);
  const ports = firstPerTargetPort(input.ports);
  const noneMode = interceptionMode(input.proxy) === "NONE";
  const podAddress = input.proxy.ipAddresses[0] ?? wildcardAddress(input.proxy);
  const bound = ports.filter((port) => noneMode || port.bindToPort);
  const boundListeners = bound.map((port) => boundListener(input, port, port.bind || podAddress));
  if (noneMode) return boundListeners;
  const bind = wildcardAddress(input.proxy);
  const chains = [
    blackholeChain(input),
    ...passthroughChains(input, bind),
    ...ports
      .filter((port) => !port.bindToPort)
      .flatMap((port) => portChains(input, portConfig(port, bind, input.proxy), portMode(input, port))),
  ];
  const virtual = buildVirtualInboundListener(input, chains);
  return virtual ? [virtual, ...boundListeners] : boundListeners;
}

function portMode(input: SidecarInboundInput, port: InboundPort): MtlsMode {
  return input.mtls.perPort.get(port.targetPort) ?? input.mtls.mode;
}

/** The first port per target port; a later one of another protocol and service is a conflict, given to `conflict`. */
function firstPerTargetPort(
  ports: readonly InboundPort[],
  conflict?: (port: InboundPort, first: InboundPort) => void,
): InboundPort[] {
  const seen = new Map<number, InboundPort>();
  for (const port of ports) {
    if (port.targetPort <= 0 || protocolClass(port.protocol) === "udp") continue;
    const first = seen.get(port.targetPort);
    if (!first) seen.set(port.targetPort, port);
    else if (first.protocol !== port.protocol && first.hostname !== port.hostname) conflict?.(port, first);
  }
  return [...seen.values()].sort((a, b) => a.targetPort - b.targetPort);
}

/**
 * Reports the target ports two services declare with other protocols (Istio's reportInboundConflict),
 * under the proxy's id: callers sharing one build between proxies report each proxy's own.
 */
export function reportInboundConflicts(
  ports: readonly InboundPort[],
  proxyId: string,
  report: PushStatusReporter | undefined,
): void {
  if (!report) return;
  firstPerTargetPort(ports, (port, first) =>
    report(
      "pilot_conflict_inbound_listener",
      proxyId,
      `Conflicting inbound listener:${port.targetPort}. existing: ${first.hostname}, incoming: ${port.hostname}`,
    ),
  );
}

function portConfig(port: InboundPort, bind: string, proxy: ProxyNode): ChainConfig {
  const sidecar = port.sidecar;
  return {
    targetPort: port.targetPort,
    servicePort: port.servicePort,
    protocol: port.protocol,
    hostname: port.hostname,
    portName: port.portName ?? "",
    ...(port.kubernetesService ? { kubernetesService: port.kubernetesService } : {}),
    cluster: `inbound|${port.targetPort}||`,
    passthrough: false,
    // A Sidecar's ingress port binds where it says, else to the pod's IP (getSidecarInboundBindIPs).
    bind: sidecar ? port.bind || proxy.ipAddresses.find(isGlobalUnicast) || bind : bind,
    tls: port.tls,
    configPath: sidecar
      ? `/apis/networking.istio.io/v1/namespaces/${sidecar.namespace}/sidecar/${sidecar.name}`
      : undefined,
  };
}

function passthroughConfig(targetPort: number, bind: string): ChainConfig {
  return {
    targetPort,
    servicePort: 0,
    protocol: "UnsupportedProtocol",
    hostname: "",
    portName: VIRTUAL_INBOUND,
    cluster: INBOUND_PASSTHROUGH_CLUSTER,
    passthrough: true,
    bind,
  };
}

/** A real listener for one port, bound to the workload's address: nothing redirects traffic to 15006. */
function boundListener(input: SidecarInboundInput, port: InboundPort, bind: string): listener.Listener {
  const chains = portChains(input, { ...portConfig(port, bind, input.proxy), bind }, portMode(input, port));
  return create(listener.ListenerSchema, {
    name: listenerName(bind, port.targetPort),
    address: socketAddress(bind, port.targetPort),
    trafficDirection: core.TrafficDirection.INBOUND,
    continueOnListenerFiltersTimeout: true,
    maxConnectionsToAcceptPerSocketEvent: 1,
    connectionBalanceConfig: connectionBalance(input.proxy, "inbound"),
    listenerFilters: inboundInspectors(chains),
    listenerFiltersTimeout: protocolDetectionTimeout(input),
    filterChains: chains,
    accessLog: buildListenerAccessLogs(input, "sidecarInbound"),
  });
}

/** Traffic to 15006 itself would loop: dropped. */
function blackholeChain(input: SidecarInboundInput): listener.FilterChain {
  const chain = newFilterChain(
    [
      METADATA_EXCHANGE_NETWORK_FILTER,
      ...(input.policies?.prometheusStats ? [tcpStatsFilter(input, "sidecarInbound")] : []),
      BLACKHOLE_TCP_PROXY,
    ],
    "virtualInbound-blackhole",
  );
  chain.filterChainMatch = newFilterChainMatch();
  chain.filterChainMatch.destinationPort = input.mesh.proxyInboundListenPort ?? 15006;
  return chain;
}

/** Chains for any port (the workload mode), then for each undeclared port with its own mode. */
function passthroughChains(input: SidecarInboundInput, bind: string): listener.FilterChain[] {
  const declared = new Set(input.ports.map((p) => p.targetPort));
  const portModes = [...input.mtls.perPort].filter(([port]) => !declared.has(port)).sort(([a], [b]) => a - b);
  return [
    ...portChains(input, passthroughConfig(0, bind), input.mtls.mode),
    ...portModes.flatMap(([port, mode]) => portChains(input, passthroughConfig(port, bind), mode)),
  ];
}

function portChains(input: SidecarInboundInput, config: ChainConfig, mode: MtlsMode): listener.FilterChain[] {
  if (config.tls && mode === "DISABLE") return [userTlsChain(input, config, config.tls)];
  const cls = config.passthrough ? "auto" : protocolClass(config.protocol);
  if (cls === "udp") return [];
  // A port's chains differ only in match and TLS: its HTTP chains share one filter list, its TCP chains another.
  const options = inboundChainOptions(cls, mode);
  const http = options.some((o) => o.http) ? httpFilters(input, config) : [];
  const tcp = options.some((o) => !o.http) ? tcpFilters(input, config) : [];
  return options.map((option) => chainFor(input, config, option, option.http ? http : tcp));
}

/** One `tls` chain terminating the user's TLS; the protocol is what runs inside (HTTPS → HTTP, TLS → TCP). */
function userTlsChain(
  input: SidecarInboundInput,
  config: ChainConfig,
  settings: ServerTlsSettings,
): listener.FilterChain {
  const inner: ServiceProtocol =
    config.protocol === "HTTPS" ? "HTTP" : config.protocol === "TLS" ? "TCP" : config.protocol;
  const terminated = { ...config, protocol: inner };
  const http = protocolClass(inner) === "http";
  const chain = chainFor(
    input,
    terminated,
    { http, mtls: false, transportProtocol: "tls", applicationProtocols: [] },
    http ? httpFilters(input, terminated) : tcpFilters(input, terminated),
  );
  chain.transportSocket = downstreamTlsSocket(gatewayTlsContext(settings, input.mesh));
  return chain;
}

function chainFor(
  input: SidecarInboundInput,
  config: ChainConfig,
  option: InboundChainOption,
  filters: listener.Filter[],
): listener.FilterChain {
  const match = newFilterChainMatch();
  match.transportProtocol = option.transportProtocol;
  match.applicationProtocols = [...option.applicationProtocols];
  if (config.targetPort > 0) match.destinationPort = config.targetPort;
  const chain = newFilterChain(filters, chainName(config, option.http));
  chain.filterChainMatch = match;
  if (config.configPath) {
    chain.metadata = create(core.MetadataSchema, { filterMetadata: { istio: { config: config.configPath } } });
  }
  if (option.mtls) chain.transportSocket = inboundMtlsSocket(input, option.http ? "http" : "tcp");
  return chain;
}

/** The inbound mTLS sockets by mesh config, then by chain kind and trust domains. */
const INBOUND_MTLS_SOCKETS = weakTable<MeshConfig, Map<string, core.TransportSocket>>("listener/inboundMtlsSockets");

/**
 * The mTLS socket of an inbound chain, the same for every chain of its kind in the mesh: one object,
 * encoded once, serves every TLS chain of every workload's listener.
 */
function inboundMtlsSocket(input: SidecarInboundInput, kind: "http" | "tcp"): core.TransportSocket {
  const byMesh = envMemos(input).weak(INBOUND_MTLS_SOCKETS);
  let sockets = byMesh.get(input.mesh);
  if (!sockets) {
    sockets = new Map();
    byMesh.set(input.mesh, sockets);
  }
  const key = `${kind} ${input.trustDomains.join(" ")}`;
  let socket = sockets.get(key);
  if (!socket) {
    const context = inboundMtlsContext(kind, input.mesh, input.trustDomains);
    socket = preEncoded(core.TransportSocketSchema, downstreamTlsSocket(context));
    sockets.set(key, socket);
  }
  return socket;
}

function chainName(config: ChainConfig, http: boolean): string {
  if (config.passthrough) return http ? "virtualInbound-catchall-http" : VIRTUAL_INBOUND;
  return listenerName(config.bind, config.targetPort);
}

function httpFilters(input: SidecarInboundInput, config: ChainConfig): listener.Filter[] {
  const statPrefix = config.passthrough ? config.cluster : `inbound_${listenerName(config.bind, config.targetPort)}`;
  return [
    METADATA_EXCHANGE_NETWORK_FILTER,
    // Only NETWORK extensions join an HTTP chain's network filters (no TCP RBAC or stats).
    ...extensionNetworkFilters(input.extensions, EXTENSION_PHASES, "sidecarInbound", config.targetPort),
    buildHcmFilter(input, {
      listenerClass: "sidecarInbound",
      statPrefix: `${statPrefix};`,
      routes: { inline: inboundRouteConfig(config) },
      httpFilters: buildHttpFilters({
        ...input.policies,
        listenerClass: "sidecarInbound",
        protocol: config.protocol,
        port: config.targetPort,
      }),
      protocol: config.protocol,
    }),
  ];
}

/** The network filters of an inbound TCP chain (listener_inbound.go buildInboundNetworkFilters). */
function tcpFilters(input: SidecarInboundInput, config: ChainConfig): listener.Filter[] {
  const statPrefix = inboundStatPrefix(input.mesh.inboundClusterStatName, config, config.servicePort, config.portName);
  const terminal = buildTcpFilterStack(
    input,
    config.protocol,
    { cluster: config.cluster, ...(statPrefix ? { statPrefix } : {}) },
    undefined,
    "sidecarInbound",
  );
  return inboundNetworkFilters(input, input.policies, config.targetPort, terminal);
}

/**
 * An inbound TCP chain's stat prefix from the mesh's inboundClusterStatName (Istio's
 * BuildInboundStatPrefix: no %TARGET_PORT% and no delimiter); undefined without a pattern. `service`
 * is the chain's: its hostname, and its Kubernetes name and namespace when it has them.
 */
export function inboundStatPrefix(
  pattern: string | undefined,
  service: { hostname: string; kubernetesService?: { name: string; namespace: string } },
  port: number,
  portName: string,
): string | undefined {
  if (!pattern) return undefined;
  const kube = service.kubernetesService;
  return expandStatPattern(pattern, {
    service: kube ? `${kube.name}.${kube.namespace}` : service.hostname,
    serviceName: kube ? kube.name : service.hostname,
    fqdn: service.hostname,
    subset: "",
    port,
    portName,
  });
}

/**
 * [metadata exchange, CUSTOM authz, extension AUTHN, extension AUTHZ, RBAC, extension STATS, extension unspecified,
 * istio.stats?, `terminal` (mongo/mysql?, tcp_proxy | redis_proxy)] (networkfilter.go buildCompleteNetworkFilters),
 * for a sidecar's inbound port or a waypoint's service port.
 */
export function inboundNetworkFilters(
  env: ListenerEnv,
  policies: InboundPolicies | undefined,
  port: number,
  terminal: readonly listener.Filter[],
): listener.Filter[] {
  const { custom, enforced } = networkAuthzFilters(policies);
  const extensions = (phases: readonly ExtensionPhase[]) =>
    extensionNetworkFilters(env.extensions, phases, "sidecarInbound", port);
  return [
    METADATA_EXCHANGE_NETWORK_FILTER,
    ...custom,
    ...extensions(["AUTHN", "AUTHZ"]),
    ...enforced,
    ...extensions(["STATS", "UNSPECIFIED"]),
    ...(policies?.prometheusStats ? [tcpStatsFilter(env, "sidecarInbound")] : []),
    ...terminal,
  ];
}

/**
 * The network filters of the proxy's AuthorizationPolicies (Istio's authz builders' BuildTCP): CUSTOM
 * (ext_authz, with its shadow RBAC) and the enforced RBAC (AUDIT, DENY, ALLOW); problems reported.
 */
export function networkAuthzFilters(policies: InboundPolicies | undefined): {
  custom: listener.Filter[];
  enforced: listener.Filter[];
} {
  const custom: listener.Filter[] = [];
  const enforced: listener.Filter[] = [];
  if (!policies?.authz) return { custom, enforced };
  const options = policies.authzOptions ?? {};
  if (policies.customAuthz) {
    const built = buildTcpAuthzFilters(policies.authz, { ...options, custom: policies.customAuthz });
    custom.push(...built.filters);
    for (const problem of built.problems) policies.report?.(problem);
  }
  const built = buildTcpAuthzFilters(policies.authz, options);
  enforced.push(...built.filters);
  for (const problem of built.problems) policies.report?.(problem);
  return { custom, enforced };
}

const ZERO = create(DurationSchema, {});

/**
 * The inline route of an inbound HTTP chain (httproute.go buildSidecarInboundHTTPRouteConfig): every
 * request to the local workload's cluster, no timeout, two retries of resets before the request
 * reached it (none on gRPC ports).
 */
function inboundRouteConfig(config: ChainConfig): route.RouteConfiguration {
  const grpc = config.protocol === "GRPC" || config.protocol === "GRPC-Web";
  const action = create(route.RouteActionSchema, {
    clusterSpecifier: { case: "cluster", value: config.cluster },
    timeout: ZERO,
    maxStreamDuration: create(route.RouteAction_MaxStreamDurationSchema, {
      maxStreamDuration: ZERO,
      grpcTimeoutHeaderMax: ZERO,
    }),
  });
  if (!grpc) {
    action.retryPolicy = create(route.RetryPolicySchema, { retryOn: "reset-before-request", numRetries: 2 });
  }
  return create(route.RouteConfigurationSchema, {
    name: config.cluster,
    validateClusters: false,
    virtualHosts: [
      create(route.VirtualHostSchema, {
        name: `inbound|http|${config.servicePort}`,
        domains: ["*"],
        routes: [
          create(route.RouteSchema, {
            name: "default",
            match: create(route.RouteMatchSchema, { pathSpecifier: { case: "prefix", value: "/" } }),
            decorator: create(route.DecoratorSchema, { operation: `${config.hostname}:${config.servicePort}/*` }),
            action: { case: "route", value: action },
          }),
        ],
      }),
    ],
  });
}
