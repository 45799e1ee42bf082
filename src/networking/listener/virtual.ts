// The capture listeners iptables redirects to (listener_builder.go): virtualOutbound (15001) hands
// each connection to the listener of its original destination, or to the catch-all chain;
// virtualInbound (15006) holds every inbound chain, told apart by destination port.
import { create } from "@bufbuild/protobuf";
import { core, listener } from "../../api/index.ts";
import type { Destination } from "../../config/types/index.ts";
import { allowAnyDnsCache } from "../dfp.ts";
import { buildHttpFilters } from "../httpfilter/index.ts";
import {
  ALLOW_ANY_DYNAMIC_DNS,
  buildAllowAnyDynamicDnsRouteConfiguration,
  destinationCluster,
} from "../route/index.ts";
import { buildListenerAccessLogs } from "./accesslog.ts";
import { connectionBalance, protocolDetectionTimeout, socketAddress, wildcardAddress } from "./address.ts";
import { buildHcmFilter } from "./hcm.ts";
import { newFilterChain, newFilterChainMatch } from "./message.ts";
import {
  httpInspectorFilter,
  inboundInspectors,
  ORIGINAL_DST_FILTER,
  ORIGINAL_SRC_FILTER,
  PLAINTEXT_HTTP_ALPN,
} from "./sniffing.ts";
import {
  BLACKHOLE_CLUSTER,
  BLACKHOLE_TCP_PROXY,
  buildTcpProxyFilter,
  PASSTHROUGH_CLUSTER,
  tcpStatsFilter,
} from "./tcp.ts";
import { envMemos, interceptionMode, type ListenerEnv } from "./types.ts";

export const VIRTUAL_OUTBOUND = "virtualOutbound";
export const VIRTUAL_INBOUND = "virtualInbound";

export interface CatchAllOptions {
  /** A Prometheus metrics provider applies: istio.stats before tcp_proxy. */
  prometheusStats?: boolean;
  /** Sidecar outboundTrafficPolicy egressProxy: where unknown traffic goes instead of PassthroughCluster. */
  egressProxy?: Destination;
}

/** virtualOutbound's options: the catch-all's, and whether unknown plaintext HTTP goes through the dynamic forward proxy. */
export interface VirtualOutboundOptions extends CatchAllOptions {
  registryOnly?: boolean;
  /** Sidecar outboundTrafficPolicy ALLOW_ANY_DYNAMIC_DNS. */
  allowAnyDynamicDns?: boolean;
}

/**
 * The catch-all TCP stack for traffic to no known service: PassthroughCluster under ALLOW_ANY,
 * BlackHoleCluster under REGISTRY_ONLY (the Sidecar's outboundTrafficPolicy, else the mesh's).
 */
export function catchAllTcpFilters(
  env: ListenerEnv,
  options: CatchAllOptions & { registryOnly?: boolean } = {},
): listener.Filter[] {
  const registryOnly = options.registryOnly ?? env.mesh.outboundTrafficPolicy?.mode === "REGISTRY_ONLY";
  const allowed = options.egressProxy
    ? destinationCluster(envMemos(env), options.egressProxy, undefined, 0)
    : PASSTHROUGH_CLUSTER;
  const cluster = registryOnly ? BLACKHOLE_CLUSTER : allowed;
  return [
    ...(options.prometheusStats ? [tcpStatsFilter(env, "sidecarOutbound")] : []),
    buildTcpProxyFilter(env, { cluster }),
  ];
}

/** virtualOutbound; undefined with interception NONE (nothing is redirected). */
export function buildVirtualOutboundListener(
  env: ListenerEnv,
  options: VirtualOutboundOptions = {},
): listener.Listener | undefined {
  const mode = interceptionMode(env.proxy);
  if (mode === "NONE") return undefined;
  const port = env.mesh.proxyListenPort ?? 15001;
  // Traffic sent to 15001 itself would loop back here forever.
  const blackhole = newFilterChain(
    [...(options.prometheusStats ? [tcpStatsFilter(env, "sidecarOutbound")] : []), BLACKHOLE_TCP_PROXY],
    "virtualOutbound-blackhole",
  );
  blackhole.filterChainMatch = newFilterChainMatch();
  blackhole.filterChainMatch.destinationPort = port;
  const catchAll = newFilterChain(catchAllTcpFilters(env, options), "virtualOutbound-catchall-tcp");
  const dynamicDns = options.allowAnyDynamicDns ? [allowAnyDynamicDnsChain(env, options)] : [];
  return create(listener.ListenerSchema, {
    name: VIRTUAL_OUTBOUND,
    address: socketAddress(wildcardAddress(env.proxy), port),
    transparent: mode === "TPROXY" ? true : undefined,
    useOriginalDst: true,
    // The HTTP inspector tells plaintext HTTP apart for the dynamic forward proxy chain.
    listenerFilters: options.allowAnyDynamicDns ? [httpInspectorFilter()] : [],
    filterChains: [blackhole, ...dynamicDns, catchAll],
    trafficDirection: core.TrafficDirection.OUTBOUND,
    maxConnectionsToAcceptPerSocketEvent: 1,
    accessLog: buildListenerAccessLogs(env, "sidecarOutbound"),
  });
}

/**
 * ALLOW_ANY_DYNAMIC_DNS (Istio's buildAllowAnyDynamicDNSHTTPFilterChain): plaintext HTTP to no known
 * listener is resolved by its Host through the shared DNS cache and sent to AllowAnyDynamicDNSCluster.
 */
function allowAnyDynamicDnsChain(env: ListenerEnv, options: CatchAllOptions): listener.FilterChain {
  const hcm = buildHcmFilter(env, {
    listenerClass: "sidecarOutbound",
    statPrefix: `outbound_${VIRTUAL_OUTBOUND}_${ALLOW_ANY_DYNAMIC_DNS};`,
    routes: { inline: buildAllowAnyDynamicDnsRouteConfiguration(env.mesh) },
    httpFilters: buildHttpFilters({
      listenerClass: "sidecarOutbound",
      protocol: "HTTP",
      prometheusStats: options.prometheusStats,
      telemetry: env.telemetry,
      extensions: env.extensions,
      persistentSessions: env.persistentSessions,
      allowAnyDnsCache: allowAnyDnsCache(env.proxy),
    }),
    protocol: "HTTP",
  });
  const chain = newFilterChain([hcm], "virtualOutbound-catchall-tcp-http");
  chain.filterChainMatch = newFilterChainMatch();
  chain.filterChainMatch.applicationProtocols = [...PLAINTEXT_HTTP_ALPN];
  return chain;
}

/**
 * virtualInbound around the inbound chains (blackhole, passthrough, then per port); undefined with
 * interception NONE. Listener filters: original_dst, original_src (TPROXY), then the inspectors the
 * chains need, scoped to their ports.
 */
export function buildVirtualInboundListener(
  env: ListenerEnv,
  chains: readonly listener.FilterChain[],
): listener.Listener | undefined {
  const mode = interceptionMode(env.proxy);
  if (mode === "NONE") return undefined;
  return create(listener.ListenerSchema, {
    name: VIRTUAL_INBOUND,
    address: socketAddress(wildcardAddress(env.proxy), env.mesh.proxyInboundListenPort ?? 15006),
    transparent: mode === "TPROXY" ? true : undefined,
    trafficDirection: core.TrafficDirection.INBOUND,
    continueOnListenerFiltersTimeout: true,
    maxConnectionsToAcceptPerSocketEvent: 1,
    connectionBalanceConfig: connectionBalance(env.proxy, "inbound"),
    listenerFilters: [
      ORIGINAL_DST_FILTER,
      ...(mode === "TPROXY" ? [ORIGINAL_SRC_FILTER] : []),
      ...inboundInspectors(chains),
    ],
    listenerFiltersTimeout: protocolDetectionTimeout(env),
    filterChains: [...chains],
    accessLog: buildListenerAccessLogs(env, "sidecarInbound"),
  });
}
