// A waypoint's `main_internal` listener (Istio's listener_waypoint.go buildWaypointInternal): the
// internal listener connect_terminate hands each HBONE stream to. It picks a filter chain by the
// stream's original destination: a service VIP, then its port (`inbound-vip|<port>|tcp|<host>` with
// tcp_proxy, `inbound-vip|<port>|http|<host>` with an HCM routing by the service's VirtualServices,
// or either by the detected protocol when the port's is unknown), else a workload the waypoint serves
// directly (`direct-tcp`/`direct-http`, to `encap`). Every chain enforces the AuthorizationPolicies
// the waypoint applies to it. Left out, as with Istio's defaults: AMBIENT_ENABLE_MULTI_NETWORK (global
// VIPs, hostname matching and the original destination filter state) and the east-west gateway's
// variant of this listener (a waypoint is never one here).
import { isIPv4 } from "node:net";
import { create } from "@bufbuild/protobuf";
import { core, type hcm, listener, packAny, route, setFilterStateNetwork, type xdsMatcher } from "../../api/index.ts";
import type { Destination } from "../../config/index.ts";
import type { DestinationRuleSpec, VirtualServiceTcpRoute } from "../../config/types/index.ts";
import type { Service, ServicePort } from "../../registry/index.ts";
import { ENCAP_CLUSTER, MAIN_INTERNAL } from "../cluster/index.ts";
import {
  buildHttpFilters,
  filterStateValue,
  ORIGINAL_DST_LOCAL_IP_KEY,
  WAYPOINT_HTTP_FILTERS,
} from "../httpfilter/index.ts";
import {
  buildDefaultRouteTo,
  buildVirtualServiceRoutes,
  MAX_DIRECT_RESPONSE_BODY_SIZE_BYTES,
  MESH_GATEWAY,
  type RouteContext,
  UNKNOWN_SERVICE_CLUSTER,
} from "../route/index.ts";
import { buildListenerAccessLogs } from "./accesslog.ts";
import {
  appProtocolMatcher,
  destinationIpMatcher,
  destinationPortMatcher,
  type IpRangeBranch,
  toChain,
  toMatcher,
} from "./chain-matcher.ts";
import { buildHcmFilter } from "./hcm.ts";
import { type InboundPolicies, inboundNetworkFilters, inboundStatPrefix } from "./inbound.ts";
import { networkFilterMessage, newFilterChain, newListener } from "./message.ts";
import { l4MatchApplies } from "./outbound.ts";
import {
  excludePorts,
  httpInspectorFilter,
  ORIGINAL_DST_FILTER,
  type ProtocolClass,
  protocolClass,
  tlsInspectorFilter,
} from "./sniffing.ts";
import { buildTcpFilterStack, type TcpDestination } from "./tcp.ts";
import { envMemos, type ListenerEnv, type VirtualService } from "./types.ts";

/** One service a waypoint serves, with what its chains are built from. */
export interface WaypointServiceInput {
  service: Service;
  /** Its VIPs as the waypoint sees them (Istio's GetAllAddressesForProxy): IPs or CIDRs. */
  addresses: readonly string[];
  /**
   * The mesh VirtualServices for it (Istio's getVirtualServiceForWaypoint: a host matching the
   * service's, in the service's or the waypoint's namespace), oldest first.
   */
  virtualServices: readonly VirtualService[];
  /** The policies its chains enforce (the waypoint's for this service: targetRefs only). */
  policies: InboundPolicies;
  /** The route hash policy of the service's DestinationRule consistentHash, for the default route. */
  defaultRouteHash?: route.RouteAction_HashPolicy;
}

/** A workload a waypoint serves directly: its IPs (none when it is reached by hostname). */
export interface WaypointWorkload {
  addresses: readonly string[];
}

/** What main_internal is built from. */
export interface MainInternalInput extends ListenerEnv {
  /** The waypoint's services, oldest first (findWaypointResources). */
  services: readonly WaypointServiceInput[];
  /** The workloads the waypoint serves directly (Istio's WorkloadsForWaypoint), oldest first. */
  workloads: readonly WaypointWorkload[];
  /** The policies of the direct pod chains: those naming the waypoint's Gateway or class. */
  policies: InboundPolicies;
  /** The service of a hostname as the waypoint sees it. */
  lookupService(hostname: string): Service | undefined;
  /** The DestinationRule the waypoint applies to traffic for `hostname` (tcp_proxy settings). */
  destinationRuleFor(hostname: string): DestinationRuleSpec | undefined;
  /** The hash policy of a route destination's DestinationRule consistentHash. */
  hashPolicy?(destination: Destination): route.RouteAction_HashPolicy | undefined;
  /** EnvoyFilter patches of a route configuration to the chain's own cluster (Istio patches only those). */
  patchDefaultRoute?(rc: route.RouteConfiguration): route.RouteConfiguration;
}

const DIRECT_TCP = "direct-tcp";
const DIRECT_HTTP = "direct-http";
/** The port of a direct pod chain: any, named as Istio names it. */
const DIRECT_PORT: ServicePort = { name: "unknown", port: 0, protocol: "TCP", targetPort: 0 };

/** The connect_authority network filter: the CONNECT authority, read by the original destination filter, is passed on once. */
const CONNECT_AUTHORITY_NETWORK_FILTER = networkFilterMessage(
  "connect_authority",
  packAny(
    setFilterStateNetwork.ConfigSchema,
    create(setFilterStateNetwork.ConfigSchema, {
      onNewConnection: [
        filterStateValue(ORIGINAL_DST_LOCAL_IP_KEY, `%FILTER_STATE(${ORIGINAL_DST_LOCAL_IP_KEY}:PLAIN)%`),
      ],
    }),
  ),
);

/** What one chain serves: a service port, or (no service) any port of a workload served directly. */
interface ChainConfig {
  service: WaypointServiceInput | undefined;
  port: ServicePort;
  cluster: string;
}

export function buildMainInternalListener(input: MainInternalInput): listener.Listener {
  const chains: listener.FilterChain[] = [];
  const branches: IpRangeBranch[] = [];
  const portClasses = new Map<number, ProtocolClass>();
  for (const service of input.services) {
    const byPort = new Map<number, xdsMatcher.Matcher_OnMatch>();
    for (const port of service.service.ports) {
      const cls = protocolClass(port.protocol);
      if (cls === "udp") continue;
      // A TLS port of a DYNAMIC_DNS wildcard entry is not served (ENABLE_WILDCARD_HOST_SERVICE_ENTRIES_FOR_TLS off).
      if (isTls(port) && service.service.hostname.startsWith("*") && service.service.resolution === "DynamicDNS") {
        continue;
      }
      const tcpName = inboundVipName(port.port, "tcp", service.service.hostname);
      const httpName = inboundVipName(port.port, "http", service.service.hostname);
      const tcpChain = () => newFilterChain(tcpFilters(input, { service, port, cluster: tcpName }), tcpName);
      const httpChain = () => newFilterChain(httpFilters(input, { service, port, cluster: httpName }), httpName);
      if (cls === "auto") {
        chains.push(tcpChain(), httpChain());
        byPort.set(port.port, toMatcher(appProtocolMatcher({ tcp: toChain(tcpName), http: toChain(httpName) })));
      } else if (cls === "http") {
        chains.push(httpChain());
        byPort.set(port.port, toChain(httpName));
      } else {
        chains.push(tcpChain());
        byPort.set(port.port, toChain(tcpName));
      }
      // TCP and HTTP on one port (of two services) is sniffed.
      const seen = portClasses.get(port.port);
      portClasses.set(port.port, seen === undefined || seen === cls ? cls : "auto");
    }
    // Without an address (Envoy refuses an empty range list) the service is reached by no VIP.
    if (byPort.size > 0 && service.addresses.length > 0) {
      branches.push({ cidrs: service.addresses.map(cidrOf), onMatch: toMatcher(destinationPortMatcher(byPort)) });
    }
  }
  const direct: ChainConfig = { service: undefined, port: DIRECT_PORT, cluster: ENCAP_CLUSTER };
  chains.push(
    newFilterChain([CONNECT_AUTHORITY_NETWORK_FILTER, ...tcpFilters(input, direct)], DIRECT_TCP),
    newFilterChain([CONNECT_AUTHORITY_NETWORK_FILTER, ...httpFilters(input, direct)], DIRECT_HTTP),
  );
  // Workloads without an IP (reached by hostname) add no range.
  const workloadAddresses = input.workloads.flatMap((w) => w.addresses);
  if (workloadAddresses.length > 0) {
    branches.push({
      cidrs: workloadAddresses.map(cidrOf),
      onMatch: toMatcher(appProtocolMatcher({ tcp: toChain(DIRECT_TCP), http: toChain(DIRECT_HTTP) })),
    });
  }
  const l = newListener(MAIN_INTERNAL);
  l.listenerSpecifier = { case: "internalListener", value: create(listener.Listener_InternalListenerConfigSchema) };
  l.listenerFilters = [ORIGINAL_DST_FILTER, httpInspector(input, portClasses)];
  const tls = tlsInspector(input.services);
  if (tls) l.listenerFilters.push(tls);
  l.trafficDirection = core.TrafficDirection.INBOUND;
  l.filterChains = chains;
  l.filterChainMatcher = destinationIpMatcher(branches);
  l.accessLog = buildListenerAccessLogs(input, "sidecarInbound");
  return l;
}

function isTls(port: ServicePort): boolean {
  return port.protocol === "HTTPS" || port.protocol === "TLS";
}

/** `inbound-vip|<port>|<tcp|http>|<host>`: a chain and the cluster it sends to. */
function inboundVipName(port: number, kind: string, hostname: string): string {
  return `inbound-vip|${port}|${kind}|${hostname}`;
}

/** An address as a CIDR (Istio's ConvertAddressToCidr): a bare IP is a host route. */
function cidrOf(address: string): { address: string; prefixLen: number } {
  const slash = address.indexOf("/");
  if (slash >= 0) return { address: address.slice(0, slash), prefixLen: Number(address.slice(slash + 1)) };
  return { address, prefixLen: isIPv4(address) ? 32 : 128 };
}

/**
 * http_inspector, left off on the ports served only as HTTP or only as TCP; on every port when the
 * waypoint serves workloads directly (any of their ports may come).
 */
function httpInspector(input: MainInternalInput, portClasses: ReadonlyMap<number, ProtocolClass>) {
  if (input.workloads.length > 0) return httpInspectorFilter();
  const known = [...portClasses].filter(([, cls]) => cls !== "auto").map(([port]) => port);
  return httpInspectorFilter(known.length > 0 ? excludePorts(known.sort((a, b) => a - b)) : undefined);
}

/** tls_inspector only when a service has a TLS port, left off on the ports no service serves as TLS. */
function tlsInspector(services: readonly WaypointServiceInput[]): listener.ListenerFilter | undefined {
  const tlsPorts = new Set<number>();
  const otherPorts = new Set<number>();
  for (const { service } of services) {
    for (const port of service.ports) (isTls(port) ? tlsPorts : otherPorts).add(port.port);
  }
  if (tlsPorts.size === 0) return undefined;
  const others = [...otherPorts].filter((p) => !tlsPorts.has(p)).sort((a, b) => a - b);
  return tlsInspectorFilter(others.length > 0 ? excludePorts(others) : undefined);
}

/** The policies of a chain: its service's, or the waypoint's own on the direct chains. */
function chainPolicies(input: MainInternalInput, config: ChainConfig): InboundPolicies {
  return config.service?.policies ?? input.policies;
}

/**
 * A TCP chain's filters (Istio's buildWaypointNetworkFilters): the inbound network filters around
 * tcp_proxy, which follows the service's VirtualService tls or tcp route and takes the settings of
 * the DestinationRule of the (first) destination's host.
 */
function tcpFilters(input: MainInternalInput, config: ChainConfig): listener.Filter[] {
  const chainService = config.service?.service;
  // The chain's service by its registry attributes (Istio sets them for every registry here).
  const named = chainService && {
    hostname: chainService.hostname,
    kubernetesService: { name: chainService.name, namespace: chainService.namespace },
  };
  const statPrefix =
    inboundStatPrefix(
      input.mesh.inboundClusterStatName,
      named ?? { hostname: "" },
      config.port.port,
      config.port.name,
    ) ?? config.cluster;
  let destination: TcpDestination = { cluster: config.cluster, statPrefix };
  let ruleHost: string | undefined;
  let subset = "";
  const service = config.service?.service;
  if (config.service && service) {
    ruleHost = service.hostname;
    const routes = waypointTcpRoutes(config.service.virtualServices, service.hostname, config.port.port);
    if (routes.length > 0) ruleHost = routes[0].destination.host;
    if (routes.length === 1) {
      subset = routes[0].destination.subset ?? "";
      destination = { cluster: destinationCluster(input, routes[0].destination, config.port.port), statPrefix };
    } else if (routes.length > 1) {
      const weightedClusters = routes
        .filter((r) => (r.weight ?? 0) > 0)
        .map((r) => ({ cluster: destinationCluster(input, r.destination, config.port.port), weight: r.weight ?? 0 }));
      destination = { weightedClusters, statPrefix };
    }
  }
  const spec = ruleHost === undefined ? undefined : input.destinationRuleFor(ruleHost);
  const rule = spec && { spec, subset, tunnel: true };
  const terminal = buildTcpFilterStack(input, config.port.protocol, destination, rule, "sidecarInbound");
  return inboundNetworkFilters(input, chainPolicies(input, config), config.port.port, terminal);
}

/**
 * The first VirtualService tls route (Gateway API semantics: before tcp) whose match names the service
 * as its one SNI host, else the first tcp route, that applies on `port` (Istio's getWaypointTCPRoutes).
 */
function waypointTcpRoutes(
  virtualServices: readonly VirtualService[],
  hostname: string,
  port: number,
): readonly VirtualServiceTcpRoute[] {
  const applies = (match: Parameters<typeof l4MatchApplies>[0]) => l4MatchApplies(match, port, {}, "");
  for (const vs of virtualServices) {
    for (const rule of vs.spec?.tls ?? []) {
      const matches = rule.match ?? [];
      const hit =
        matches.length === 0 ||
        matches.some((m) => m.sniHosts?.length === 1 && m.sniHosts[0] === hostname && applies(m));
      if (hit && (rule.route?.length ?? 0) > 0) return rule.route ?? [];
    }
  }
  for (const vs of virtualServices) {
    for (const rule of vs.spec?.tcp ?? []) {
      const matches = rule.match ?? [];
      if ((matches.length === 0 || matches.some(applies)) && (rule.route?.length ?? 0) > 0) return rule.route ?? [];
    }
  }
  return [];
}

/**
 * The cluster a route destination names on a waypoint (Istio's getWaypointDestinationCluster): its
 * `inbound-vip|…` cluster when the waypoint serves the host (subset `http`/`tcp` by the port's
 * protocol), else the host's outbound cluster.
 */
function destinationCluster(input: MainInternalInput, destination: Destination, listenerPort: number): string {
  if (!destination.host) return UNKNOWN_SERVICE_CLUSTER;
  const service = input.lookupService(destination.host);
  let port = listenerPort;
  if (destination.port !== undefined) port = destination.port.number ?? 0;
  else if (service?.ports.length === 1) port = service.ports[0].port;
  const served = service && input.services.some((s) => s.service.hostname === service.hostname);
  if (service && !served) return `outbound|${port}|${destination.subset ?? ""}|${destination.host}`;
  return `inbound-vip|${port}|${portSubset(service, port, destination.subset)}|${destination.host}`;
}

/** The subset of a waypoint's cluster for a port (Istio's portToSubset): `http` or `tcp`, then `/<subset>`. */
function portSubset(service: Service | undefined, port: number, subset: string | undefined): string {
  const servicePort = service?.ports.find((p) => p.port === port);
  const cls = servicePort ? protocolClass(servicePort.protocol) : "http";
  const kind = cls === "http" || cls === "auto" ? "http" : "tcp";
  return subset ? `${kind}/${subset}` : kind;
}

/**
 * An HTTP chain's filters (Istio's buildWaypointInboundHTTPFilters): an HCM with the waypoint's
 * filters (authorization and authentication first, router last) and an inline route configuration.
 */
function httpFilters(input: MainInternalInput, config: ChainConfig): listener.Filter[] {
  const policies = chainPolicies(input, config);
  const httpFilterList: hcm.HttpFilter[] = buildHttpFilters(
    { ...policies, listenerClass: "sidecarInbound", protocol: config.port.protocol, waypoint: true },
    WAYPOINT_HTTP_FILTERS,
  );
  return [
    buildHcmFilter(input, {
      listenerClass: "sidecarInbound",
      statPrefix: `inbound_0.0.0.0_${config.port.port};`,
      routes: { inline: waypointRouteConfig(input, config) },
      httpFilters: httpFilterList,
      protocol: config.port.protocol,
      waypoint: true,
    }),
  ];
}

/**
 * The chain's route configuration (Istio's buildWaypointInboundHTTPRouteConfig): one virtual host
 * with the routes of every VirtualService of the service; without any, one route to the chain's
 * cluster, as an outbound default route.
 */
function waypointRouteConfig(input: MainInternalInput, config: ChainConfig): route.RouteConfiguration {
  const memos = envMemos(input);
  const port = config.port.port;
  const service = config.service?.service;
  const domains = service?.resolution === "DynamicDNS" ? [service.hostname] : ["*"];
  const routes = config.service ? virtualServiceRoutes(input, config.service, port) : [];
  const virtualHost = (vhostRoutes: route.Route[]) => ({ name: `inbound|http|${port}`, domains, routes: vhostRoutes });
  if (routes.length > 0) {
    return create(route.RouteConfigurationSchema, {
      name: config.cluster,
      virtualHosts: [virtualHost(routes)],
      validateClusters: false,
    });
  }
  const operation = `${service?.hostname ?? ""}:${port}/*`;
  const defaultRoute = buildDefaultRouteTo(
    memos,
    config.cluster,
    operation,
    input.mesh,
    config.service?.defaultRouteHash,
  );
  const rc = create(route.RouteConfigurationSchema, {
    name: config.cluster,
    virtualHosts: [virtualHost([defaultRoute])],
    validateClusters: false,
    maxDirectResponseBodySizeBytes: MAX_DIRECT_RESPONSE_BODY_SIZE_BYTES,
  });
  return input.patchDefaultRoute ? input.patchDefaultRoute(rc) : rc;
}

/** The HTTP routes of the service's VirtualServices, merged in order (Istio's waypointInboundRoute). */
function virtualServiceRoutes(input: MainInternalInput, service: WaypointServiceInput, port: number): route.Route[] {
  const context: RouteContext = {
    proxy: input.proxy,
    mesh: input.mesh,
    memos: envMemos(input),
    listenerPort: port,
    gatewayNames: new Set([MESH_GATEWAY]),
    isTls: false,
    lookupService: input.lookupService,
    hashPolicy: input.hashPolicy,
    destinationCluster: (destination, _service, listenerPort) => destinationCluster(input, destination, listenerPort),
  };
  return service.virtualServices.flatMap((vs) =>
    vs.spec?.http ? buildVirtualServiceRoutes(vs, context, { dropSourceLabelMatches: true }) : [],
  );
}
