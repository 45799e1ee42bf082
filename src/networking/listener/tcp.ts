// TCP filter stacks (networkfilter.go): tcp_proxy to one cluster or weighted clusters, behind the
// metadata exchange, authorization and stats network filters where they apply.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { envoyType, type listener, packAny, tcpProxy } from "../../api/index.ts";
import type { DestinationRuleSpec, VirtualServiceTcpRoute } from "../../config/types/index.ts";
import type { Service, ServiceProtocol } from "../../registry/index.ts";
import { weakTable } from "../../util/index.ts";
import { statPrefix } from "../cluster/index.ts";
import { toDuration } from "../duration.ts";
import {
  istioTypedStruct,
  type ListenerClass,
  statsPluginConfig,
  TCP_METADATA_EXCHANGE_TYPE_URL,
} from "../httpfilter/index.ts";
import { buildAccessLogs } from "./accesslog.ts";
import { networkFilterMessage, newTcpProxy } from "./message.ts";
import { DEFAULT_PROTOCOL_FILTERS, protocolFilterStack } from "./protocol-filters.ts";
import { envMemos, type ListenerEnv, type VirtualService, vsRef } from "./types.ts";

export const TCP_PROXY_FILTER = "envoy.filters.network.tcp_proxy";
export const BLACKHOLE_CLUSTER = "BlackHoleCluster";
export const PASSTHROUGH_CLUSTER = "PassthroughCluster";
export const INBOUND_PASSTHROUGH_CLUSTER = "InboundPassthroughCluster";

export interface WeightedCluster {
  cluster: string;
  weight: number;
}

/** Where a tcp_proxy sends connections: one cluster (stat prefix = its name), or a weighted split. */
export type TcpDestination =
  | { cluster: string; statPrefix?: string }
  | { weightedClusters: readonly WeightedCluster[]; statPrefix: string };

/**
 * The DestinationRule of the destination's host, which shapes tcp_proxy (networkfilter.go
 * buildOutboundNetworkFiltersWithSingleDestination): its top-level tcp idleTimeout and
 * maxConnectionDuration, source-IP hashing, and the tunnel of the subset routed to (top-level without one).
 */
export interface TcpProxyRule {
  spec: DestinationRuleSpec;
  /** The subset routed to; "" for none or a weighted split. */
  subset: string;
  /** Whether the rule's tunnel applies (not on a gateway's AUTO_PASSTHROUGH chains). */
  tunnel: boolean;
}

/**
 * tcp_proxy with the mesh access log and the DestinationRule's settings; the idle timeout falls back
 * to the node's IDLE_TIMEOUT. Weight-0 clusters are dropped.
 */
export function buildTcpProxyFilter(
  env: ListenerEnv,
  destination: TcpDestination,
  rule?: TcpProxyRule,
  // Telemetry access logging selects by workload mode: gateways log as clients, as outbound does.
  listenerClass: ListenerClass = "sidecarOutbound",
): listener.Filter {
  const config = newTcpProxy(
    "cluster" in destination ? (destination.statPrefix ?? destination.cluster) : destination.statPrefix,
  );
  config.clusterSpecifier =
    "cluster" in destination
      ? { case: "cluster", value: destination.cluster }
      : {
          case: "weightedClusters",
          value: create(tcpProxy.TcpProxy_WeightedClusterSchema, {
            clusters: destination.weightedClusters
              .filter((c) => c.weight > 0)
              .map((c) =>
                create(tcpProxy.TcpProxy_WeightedCluster_ClusterWeightSchema, { name: c.cluster, weight: c.weight }),
              ),
          }),
        };
  config.accessLog = [...(env.telemetry?.accessLogs(listenerClass) ?? buildAccessLogs(env.mesh))];
  const tcp = rule?.spec.trafficPolicy?.connectionPool?.tcp;
  const idleTimeout = toDuration(tcp?.idleTimeout ?? env.proxy.metadata.IDLE_TIMEOUT);
  if (idleTimeout) config.idleTimeout = idleTimeout;
  const maxConnectionDuration = toDuration(tcp?.maxConnectionDuration);
  if (maxConnectionDuration) config.maxDownstreamConnectionDuration = maxConnectionDuration;
  if (rule && hashesSourceIp(rule)) {
    config.hashPolicy = [
      create(envoyType.HashPolicySchema, {
        policySpecifier: { case: "sourceIp", value: create(envoyType.HashPolicy_SourceIpSchema) },
      }),
    ];
  }
  const tunnel = rule?.tunnel ? tunnelOf(rule) : undefined;
  if (tunnel) {
    config.tunnelingConfig = create(tcpProxy.TcpProxy_TunnelingConfigSchema, {
      hostname: tunnel.targetHost.includes(":")
        ? `[${tunnel.targetHost}]:${tunnel.targetPort}`
        : `${tunnel.targetHost}:${tunnel.targetPort}`,
      usePost: tunnel.protocol === "POST",
    });
  }
  return networkFilterMessage(TCP_PROXY_FILTER, packAny(tcpProxy.TcpProxySchema, config));
}

/**
 * tcp_proxy as the terminal filter of a chain for a port of `protocol`, behind the protocol's filter or
 * replaced by redis_proxy (protocol-filters.ts).
 */
export function buildTcpFilterStack(
  env: ListenerEnv,
  protocol: ServiceProtocol,
  destination: TcpDestination,
  rule?: TcpProxyRule,
  listenerClass: ListenerClass = "sidecarOutbound",
): listener.Filter[] {
  const proxy = buildTcpProxyFilter(env, destination, rule, listenerClass);
  const statPrefix =
    "cluster" in destination ? (destination.statPrefix ?? destination.cluster) : destination.statPrefix;
  const cluster =
    "cluster" in destination
      ? destination.cluster
      : (destination.weightedClusters.find((c) => c.weight > 0) ?? destination.weightedClusters[0]).cluster;
  return protocolFilterStack(env.protocolFilters ?? DEFAULT_PROTOCOL_FILTERS, protocol, proxy, statPrefix, cluster);
}

/** Top-level consistentHash.useSourceIp, unless the subset routed to sets a load balancer of its own. */
function hashesSourceIp(rule: TcpProxyRule): boolean {
  const subsetLb = rule.spec.subsets?.find((s) => s.name === rule.subset)?.trafficPolicy?.loadBalancer;
  const lb = subsetLb ?? rule.spec.trafficPolicy?.loadBalancer;
  return lb?.consistentHash?.useSourceIp === true;
}

/** A subset's tunnel replaces the top-level one; a subset without one (or unknown) tunnels nothing. */
function tunnelOf(rule: TcpProxyRule) {
  if (rule.subset === "") return rule.spec.trafficPolicy?.tunnel;
  return rule.spec.subsets?.find((s) => s.name === rule.subset)?.trafficPolicy?.tunnel;
}

/** tcp_proxy to BlackHoleCluster for traffic to the capture port itself (no access log, no idle timeout). */
export const BLACKHOLE_TCP_PROXY: listener.Filter = networkFilterMessage(
  TCP_PROXY_FILTER,
  packAny(
    tcpProxy.TcpProxySchema,
    create(tcpProxy.TcpProxySchema, {
      statPrefix: BLACKHOLE_CLUSTER,
      clusterSpecifier: { case: "cluster", value: BLACKHOLE_CLUSTER },
    }),
  ),
);

/** istio.metadata_exchange (network): exchanges workload metadata over ALPN istio-peer-exchange (inbound mTLS). */
export const METADATA_EXCHANGE_NETWORK_FILTER: listener.Filter = networkFilterMessage(
  "istio.metadata_exchange",
  istioTypedStruct(TCP_METADATA_EXCHANGE_TYPE_URL, { protocol: "istio-peer-exchange", enable_discovery: true }),
);

/**
 * istio.stats (network), when a Prometheus metrics provider applies: the Telemetry API's config for the
 * class (metric overrides, reporting interval) when it is known.
 */
export function tcpStatsFilter(env: ListenerEnv, listenerClass: ListenerClass): listener.Filter {
  const value =
    env.telemetry?.stats(listenerClass) ?? (listenerClass === "sidecarOutbound" ? OUTBOUND_STATS : INBOUND_STATS);
  const statsFilters = envMemos(env).weak(STATS_FILTERS);
  let filter = statsFilters.get(value);
  if (!filter) {
    filter = networkFilterMessage("istio.stats", statsPluginConfig(value));
    statsFilters.set(value, filter);
  }
  return filter;
}

const OUTBOUND_STATS: JsonObject = {};
const INBOUND_STATS: JsonObject = { disable_host_header_fallback: true };
/**
 * The filter per stats config object (the Telemetry API's answer, kept per listener class by the
 * proxy's telemetry, or a default): every TCP chain of a build shares one, packed once.
 */
const STATS_FILTERS = weakTable<JsonObject, listener.Filter>("listener/tcpStatsFilters");

/** What resolving a VirtualService destination needs. */
export interface RouteContext extends ListenerEnv {
  /** Services by hostname: a destination without a port on a single-port service uses that port. */
  services?: readonly Service[];
  /** The cluster DNS suffix that short hosts resolve under. */
  domainSuffix?: string;
  /** Network filters that run before tcp_proxy (istio.stats). */
  before?: readonly listener.Filter[];
  /** The DestinationRule the proxy applies to a visible service's host (see TcpProxyRule). */
  destinationRuleFor?: (hostname: string) => DestinationRuleSpec | undefined;
  /** The name of the listener's port in outboundClusterStatName (a gateway server's; a sidecar's has none). */
  statPortName?: string;
}

/**
 * A VirtualService tcp/tls route on a port of `protocol` as network filters (networkfilter.go
 * buildOutboundNetworkFilters): tcp_proxy (with its protocol filter) to its one destination, or
 * weighted clusters with the VirtualService as stat prefix; the first destination's DestinationRule
 * applies either way (its subset only for a single destination).
 */
export function routeTcpFilters(
  context: RouteContext,
  vs: VirtualService,
  routes: readonly VirtualServiceTcpRoute[],
  listenPort: number,
  protocol: ServiceProtocol,
): listener.Filter[] {
  const clusters = routes.map((r) => ({
    cluster: destinationCluster(context, vs, r, listenPort),
    weight: r.weight ?? 0,
  }));
  const spec = context.destinationRuleFor?.(destinationHost(context, vs, routes[0].destination.host));
  const subset = clusters.length === 1 ? (routes[0].destination.subset ?? "") : "";
  const rule = spec && { spec, subset, tunnel: true };
  const destination: TcpDestination =
    clusters.length === 1
      ? singleDestination(context, clusters[0].cluster, routes[0].destination, vs, listenPort)
      : { weightedClusters: clusters, statPrefix: `${vsRef(vs).name}.${vsRef(vs).namespace}` };
  return [...(context.before ?? []), ...buildTcpFilterStack(context, protocol, destination, rule)];
}

/**
 * One route destination: its cluster, the stat prefix the cluster's name unless the mesh names outbound
 * stats and the host is a service the proxy sees (Istio's buildOutboundNetworkFilters).
 */
function singleDestination(
  context: RouteContext,
  cluster: string,
  route: VirtualServiceTcpRoute["destination"],
  vs: VirtualService,
  listenPort: number,
): TcpDestination {
  const pattern = context.mesh.outboundClusterStatName;
  const host = destinationHost(context, vs, route.host);
  const service = pattern ? context.services?.find((s) => s.hostname === host) : undefined;
  if (!pattern || !service) return { cluster };
  const subset = route.subset ?? "";
  return {
    cluster,
    statPrefix: statPrefix(pattern, { service, subset, port: listenPort, portName: context.statPortName ?? "" }),
  };
}

/** A destination host as written, short names taken as in the VirtualService's namespace. */
function destinationHost(context: RouteContext, vs: VirtualService, written: string): string {
  return written.includes(".")
    ? written
    : `${written}.${vsRef(vs).namespace}.svc.${context.domainSuffix ?? "cluster.local"}`;
}

/** `outbound|<port>|<subset>|<fqdn>`. */
function destinationCluster(
  context: RouteContext,
  vs: VirtualService,
  route: VirtualServiceTcpRoute,
  listenPort: number,
): string {
  const host = destinationHost(context, vs, route.destination.host);
  let port = route.destination.port?.number ?? 0;
  if (port === 0) {
    const target = context.services?.find((s) => s.hostname === host);
    port = target?.ports.length === 1 ? target.ports[0].port : listenPort;
  }
  return `outbound|${port}|${route.destination.subset ?? ""}|${host}`;
}
