// A waypoint proxy's listeners (Istio's listener_waypoint.go buildWaypointInbound): `connect_terminate`
// takes HBONE on port 15008 and hands each CONNECT stream to the main_internal cluster, whose internal
// listener `main_internal` (main-internal.ts) serves it by the chain of its destination service or
// workload; the internal listeners `connect_originate` (HBONE to the destination it was given),
// `inner_connect_originate` and `outer_connect_originate` (double HBONE, which istiod gives every
// waypoint) send traffic on.
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import {
  core,
  hcm,
  listener,
  packAny,
  route,
  setFilterStateNetwork,
  setFilterStateValue,
  tcpProxy,
  tls,
} from "../../api/index.ts";
import {
  connectTlsContext,
  HBONE_PORT,
  INNER_CONNECT_ORIGINATE,
  MAIN_INTERNAL,
  OUTER_CONNECT_ORIGINATE,
} from "../cluster/index.ts";
import { CONNECT_ORIGINATE } from "../endpoint/index.ts";
import {
  connectAuthorityFilter,
  filterStateValue,
  hashableStringFactory,
  ORIGINAL_DST_LOCAL_IP_KEY,
  ROUTER_HTTP_FILTER,
  WAYPOINT_DOWNSTREAM_PEER_METADATA,
} from "../httpfilter/index.ts";
import {
  buildFilteredAccessLogs,
  buildListenerAccessLogs,
  ERROR_STATUS_FILTER,
  UPSTREAM_FAILURE_FILTER,
} from "./accesslog.ts";
import { socketAddress, wildcardAddress } from "./address.ts";
import { HCM_FILTER } from "./hcm.ts";
import { buildMainInternalListener, type MainInternalInput } from "./main-internal.ts";
import { networkFilterMessage, newFilterChain, newHttpConnectionManager, newListener, newTcpProxy } from "./message.ts";
import { ORIGINAL_DST_FILTER } from "./sniffing.ts";
import { TCP_PROXY_FILTER } from "./tcp.ts";
import type { ListenerEnv } from "./types.ts";

export const CONNECT_TERMINATE = "connect_terminate";
/** Where the inner listeners find the double-HBONE target the endpoint's metadata names. */
const DOUBLE_HBONE_TARGET_KEY = "istio.double_hbone.hbone_target_address";
const DOUBLE_HBONE_TARGET = `%FILTER_STATE(${DOUBLE_HBONE_TARGET_KEY}:PLAIN)%`;

const OVERWRITE_OR_ADD = core.HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD;

/** The waypoint's listeners, in Istio's order. */
export function buildWaypointListeners(input: MainInternalInput): listener.Listener[] {
  return [
    connectTerminateListener(input),
    buildMainInternalListener(input),
    connectOriginateListener(input),
    innerConnectOriginateListener(input),
    outerConnectOriginateListener(input),
  ];
}

/**
 * connect_terminate: HBONE from ztunnels (TLS 1.3, client certificates of the mesh required), each
 * CONNECT stream to main_internal, exact connection balance (few long-lived tunnels).
 */
function connectTerminateListener(env: ListenerEnv): listener.Listener {
  const l = newListener(CONNECT_TERMINATE);
  l.address = socketAddress(wildcardAddress(env.proxy), HBONE_PORT);
  const chain = newFilterChain([networkFilterMessage(HCM_FILTER, connectTerminateManager(env))], "default");
  const context = create(tls.DownstreamTlsContextSchema, {
    commonTlsContext: connectTlsContext(env.mesh),
    requireClientCertificate: true,
  });
  chain.transportSocket = create(core.TransportSocketSchema, {
    name: "tls",
    configType: { case: "typedConfig", value: packAny(tls.DownstreamTlsContextSchema, context) },
  });
  l.filterChains = [chain];
  l.connectionBalanceConfig = create(listener.Listener_ConnectionBalanceConfigSchema, {
    balanceType: { case: "exactBalance", value: {} },
  });
  l.accessLog = buildListenerAccessLogs(env, "sidecarInbound");
  return l;
}

/** The connection manager that ends HBONE: CONNECT only, HTTP/2 with keepalive and bounded streams. */
function connectTerminateManager(env: ListenerEnv) {
  const manager = newHttpConnectionManager();
  manager.statPrefix = CONNECT_TERMINATE;
  manager.routeSpecifier = {
    case: "routeConfig",
    value: create(route.RouteConfigurationSchema, {
      name: "default",
      virtualHosts: [
        {
          name: "default",
          domains: ["*"],
          routes: [
            {
              match: { pathSpecifier: { case: "connectMatcher", value: {} } },
              action: {
                case: "route",
                value: {
                  clusterSpecifier: { case: "cluster", value: MAIN_INTERNAL },
                  upgradeConfigs: [{ upgradeType: "CONNECT", connectConfig: {} }],
                },
              },
            },
          ],
        },
      ],
    }),
  };
  manager.forwardClientCertDetails = hcm.HttpConnectionManager_ForwardClientCertDetails.APPEND_FORWARD;
  manager.setCurrentClientCertDetails = create(hcm.HttpConnectionManager_SetCurrentClientCertDetailsSchema, {
    subject: true,
    uri: true,
    dns: true,
  });
  manager.serverName = "istio-envoy";
  manager.useRemoteAddress = false;
  manager.streamIdleTimeout = create(DurationSchema);
  manager.upgradeConfigs = [create(hcm.HttpConnectionManager_UpgradeConfigSchema, { upgradeType: "CONNECT" })];
  manager.http2ProtocolOptions = create(core.Http2ProtocolOptionsSchema, {
    allowConnect: true,
    // Every stream of a tunnel is on one worker: bounded for fairness.
    maxConcurrentStreams: 100,
    // Prunes the tunnels of clients that stopped answering.
    connectionKeepalive: { interval: { seconds: 10n }, timeout: { seconds: 20n } },
  });
  manager.httpFilters = [WAYPOINT_DOWNSTREAM_PEER_METADATA, connectAuthorityFilter(env.proxy), ROUTER_HTTP_FILTER];
  // Failed requests only: the inner streams log the rest.
  manager.accessLog = buildFilteredAccessLogs(env, "sidecarInbound", ERROR_STATUS_FILTER);
  return packAny(hcm.HttpConnectionManagerSchema, manager);
}

/** connect_originate: each connection as HBONE to its original destination (Istio's buildConnectOriginateListener). */
function connectOriginateListener(env: ListenerEnv): listener.Listener {
  const proxy = newTcpProxy(CONNECT_ORIGINATE);
  proxy.clusterSpecifier = { case: "cluster", value: CONNECT_ORIGINATE };
  proxy.tunnelingConfig = create(tcpProxy.TcpProxy_TunnelingConfigSchema, { hostname: "%DOWNSTREAM_LOCAL_ADDRESS%" });
  return internalListener(env, CONNECT_ORIGINATE, [tunnelFilter(env, proxy)], true);
}

/**
 * inner_connect_originate: the inner tunnel of double HBONE, to the target the endpoint's metadata
 * names, saying which network the request comes from.
 */
function innerConnectOriginateListener(env: ListenerEnv): listener.Listener {
  const transitive = setFilterStateValue.FilterStateValue_SharedWithUpstream.TRANSITIVE;
  const metadata = create(setFilterStateNetwork.ConfigSchema, {
    onNewConnection: [
      filterStateValue(
        ORIGINAL_DST_LOCAL_IP_KEY,
        "%DYNAMIC_METADATA(envoy.filters.listener.original_dst:local)%",
        "",
        transitive,
      ),
      filterStateValue(
        DOUBLE_HBONE_TARGET_KEY,
        `%DYNAMIC_METADATA(istio:double_hbone:hbone_target_address)%`,
        hashableStringFactory(env.proxy),
        transitive,
      ),
    ],
  });
  const propagate = networkFilterMessage(
    "propagate_endpoint_metadata",
    packAny(setFilterStateNetwork.ConfigSchema, metadata),
  );
  const proxy = newTcpProxy(INNER_CONNECT_ORIGINATE);
  proxy.clusterSpecifier = { case: "cluster", value: INNER_CONNECT_ORIGINATE };
  proxy.tunnelingConfig = create(tcpProxy.TcpProxy_TunnelingConfigSchema, {
    hostname: DOUBLE_HBONE_TARGET,
    headersToAdd: [
      {
        appendAction: OVERWRITE_OR_ADD,
        header: { key: "x-forwarded-network", value: env.proxy.metadata.NETWORK ?? "" },
      },
    ],
  });
  return internalListener(env, INNER_CONNECT_ORIGINATE, [propagate, tunnelFilter(env, proxy)], false);
}

/** outer_connect_originate: the outer tunnel of double HBONE, telling the east-west gateway a waypoint sent it. */
function outerConnectOriginateListener(env: ListenerEnv): listener.Listener {
  const proxy = newTcpProxy(OUTER_CONNECT_ORIGINATE);
  proxy.clusterSpecifier = { case: "cluster", value: OUTER_CONNECT_ORIGINATE };
  proxy.tunnelingConfig = create(tcpProxy.TcpProxy_TunnelingConfigSchema, {
    hostname: DOUBLE_HBONE_TARGET,
    headersToAdd: [{ appendAction: OVERWRITE_OR_ADD, header: { key: "x-istio-source", value: "waypoint" } }],
  });
  return internalListener(env, OUTER_CONNECT_ORIGINATE, [tunnelFilter(env, proxy)], true);
}

/** tcp_proxy of HBONE origination, logging only upstream failures, whose details are lost otherwise. */
function tunnelFilter(env: ListenerEnv, proxy: tcpProxy.TcpProxy): listener.Filter {
  proxy.accessLog = buildFilteredAccessLogs(env, "sidecarInbound", UPSTREAM_FAILURE_FILTER);
  return networkFilterMessage(TCP_PROXY_FILTER, packAny(tcpProxy.TcpProxySchema, proxy));
}

/** An internal listener of one filter chain, reading the original destination when `originalDst`. */
function internalListener(
  env: ListenerEnv,
  name: string,
  filters: listener.Filter[],
  originalDst: boolean,
): listener.Listener {
  const l = newListener(name);
  l.useOriginalDst = false;
  l.listenerSpecifier = { case: "internalListener", value: create(listener.Listener_InternalListenerConfigSchema) };
  if (originalDst) l.listenerFilters = [ORIGINAL_DST_FILTER];
  l.filterChains = [newFilterChain(filters)];
  l.accessLog = buildListenerAccessLogs(env, "sidecarInbound");
  return l;
}
