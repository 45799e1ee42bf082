// The listener builders' hot messages written as plain objects of exactly the shape protobuf-es
// create() gives (every field's zero value, message fields absent until set): create() walks every
// member of the schema and converts the init object on each call, which was about a third of LDS
// build time. The builders set the fields they need, with values that already are messages;
// message.test.ts checks each shape against create().
import type { Any } from "@bufbuild/protobuf/wkt";
import type { core, hcm, listener, tcpProxy } from "../../api/index.ts";

export function newListener(name: string): listener.Listener {
  return {
    $typeName: "envoy.config.listener.v3.Listener",
    name,
    additionalAddresses: [],
    statPrefix: "",
    filterChains: [],
    drainType: 0,
    listenerFilters: [],
    continueOnListenerFiltersTimeout: false,
    socketOptions: [],
    trafficDirection: 0,
    reusePort: false,
    accessLog: [],
    listenerSpecifier: { case: undefined },
    enableMptcp: false,
    ignoreGlobalConnLimit: false,
    bypassOverloadManager: false,
  };
}

/**
 * A FilterChain; the message fields the builders set are present too, as undefined (unset): every
 * chain has one hidden class, whatever its builder set (five shapes in one LDS response before,
 * which turned the encoder's reads megamorphic; see clusterMessage).
 */
export function newFilterChain(filters: listener.Filter[], name = ""): listener.FilterChain {
  return {
    $typeName: "envoy.config.listener.v3.FilterChain",
    filters,
    name,
    filterChainMatch: undefined,
    metadata: undefined,
    transportSocket: undefined,
    transportSocketConnectTimeout: undefined,
  };
}

/** A FilterChainMatch; its wrapper fields present as undefined (unset), for one hidden class. */
export function newFilterChainMatch(): listener.FilterChainMatch {
  return {
    $typeName: "envoy.config.listener.v3.FilterChainMatch",
    prefixRanges: [],
    addressSuffix: "",
    directSourcePrefixRanges: [],
    sourceType: 0,
    sourcePrefixRanges: [],
    sourcePorts: [],
    serverNames: [],
    transportProtocol: "",
    applicationProtocols: [],
    destinationPort: undefined,
    suffixLen: undefined,
  };
}

export function cidrRangeMessage(addressPrefix: string, prefixLen: number): core.CidrRange {
  return { $typeName: "envoy.config.core.v3.CidrRange", addressPrefix, prefixLen };
}

export function socketAddressMessage(address: string, port: number): core.Address {
  return {
    $typeName: "envoy.config.core.v3.Address",
    address: {
      case: "socketAddress",
      value: {
        $typeName: "envoy.config.core.v3.SocketAddress",
        protocol: 0,
        address,
        portSpecifier: { case: "portValue", value: port },
        resolverName: "",
        ipv4Compat: false,
      },
    },
  };
}

export function networkFilterMessage(name: string, config: Any): listener.Filter {
  return { $typeName: "envoy.config.listener.v3.Filter", name, configType: { case: "typedConfig", value: config } };
}

export function newTcpProxy(statPrefix: string): tcpProxy.TcpProxy {
  return {
    $typeName: "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
    statPrefix,
    clusterSpecifier: { case: undefined },
    accessLog: [],
    hashPolicy: [],
    flushAccessLogOnConnected: false,
  };
}

export function newHttpConnectionManager(): hcm.HttpConnectionManager {
  return {
    $typeName: "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
    codecType: 0,
    statPrefix: "",
    routeSpecifier: { case: undefined },
    httpFilters: [],
    serverName: "",
    serverHeaderTransformation: 0,
    accessLog: [],
    flushAccessLogOnNewRequest: false,
    xffNumTrustedHops: 0,
    originalIpDetectionExtensions: [],
    earlyHeaderMutationExtensions: [],
    skipXffAppend: false,
    via: "",
    preserveExternalRequestId: false,
    alwaysSetRequestIdInResponse: false,
    forwardClientCertDetails: 0,
    proxy100Continue: false,
    representIpv4RemoteAddressAsIpv4MappedIpv6: false,
    upgradeConfigs: [],
    mergeSlashes: false,
    pathWithEscapedSlashesAction: 0,
    stripMatchingHostPort: false,
    stripPortMode: { case: undefined },
    stripTrailingHostDot: false,
    appendXForwardedPort: false,
    appendLocalOverload: false,
  };
}
