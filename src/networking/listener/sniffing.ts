// Protocol classes and the listener filters that sniff: tls_inspector (SNI, ALPN, TLS or not) and
// http_inspector (HTTP/1.1 or h2c on plaintext), present only when a filter chain matches on what
// they detect (listener.go, listener_inbound.go populateListenerFilters).
import { create } from "@bufbuild/protobuf";
import {
  envoyType,
  httpInspector,
  listener,
  originalDst,
  originalSrc,
  packAny,
  proxyProtocol,
  tlsInspector,
} from "../../api/index.ts";
import type { ServiceProtocol } from "../../registry/index.ts";

/** How a port's traffic is handled: HTTP (HCM), TCP (tcp_proxy), Auto (sniffed: both), UDP (skipped). */
export type ProtocolClass = "http" | "tcp" | "auto" | "udp";

const HTTP_PROTOCOLS: ReadonlySet<ServiceProtocol> = new Set(["HTTP", "HTTP2", "GRPC", "GRPC-Web", "HTTP_PROXY"]);
const TCP_PROTOCOLS: ReadonlySet<ServiceProtocol> = new Set(["TCP", "HTTPS", "TLS", "Mongo", "Redis", "MySQL"]);

export function protocolClass(protocol: ServiceProtocol): ProtocolClass {
  if (HTTP_PROTOCOLS.has(protocol)) return "http";
  if (TCP_PROTOCOLS.has(protocol)) return "tcp";
  if (protocol === "UDP") return "udp";
  return "auto";
}

/** ALPN the http_inspector reports for plaintext HTTP. */
export const PLAINTEXT_HTTP_ALPN: readonly string[] = Object.freeze(["http/1.1", "h2c"]);
export const TLS_TRANSPORT = "tls";
export const RAW_BUFFER_TRANSPORT = "raw_buffer";

export const TLS_INSPECTOR = "envoy.filters.listener.tls_inspector";
export const HTTP_INSPECTOR = "envoy.filters.listener.http_inspector";
export const ORIGINAL_DST = "envoy.filters.listener.original_dst";
export const ORIGINAL_SRC = "envoy.filters.listener.original_src";
/** The mark TPROXY interception routes upstream traffic back through the sidecar by. */
const ORIGINAL_SRC_MARK = 1337;

function listenerFilter(
  name: string,
  config: listener.ListenerFilter["configType"],
  filterDisabled?: listener.ListenerFilterChainMatchPredicate,
): listener.ListenerFilter {
  return create(listener.ListenerFilterSchema, { name, configType: config, filterDisabled });
}

// The inspectors' configs never vary: packed once, shared by every listener (messages are never changed once built).
const TLS_INSPECTOR_CONFIG: listener.ListenerFilter["configType"] = {
  case: "typedConfig",
  value: packAny(
    tlsInspector.TlsInspectorSchema,
    create(tlsInspector.TlsInspectorSchema, { initialReadBufferSize: 512 }),
  ),
};
const HTTP_INSPECTOR_CONFIG: listener.ListenerFilter["configType"] = {
  case: "typedConfig",
  value: packAny(httpInspector.HttpInspectorSchema, create(httpInspector.HttpInspectorSchema)),
};
const TLS_INSPECTOR_FILTER = listenerFilter(TLS_INSPECTOR, TLS_INSPECTOR_CONFIG);
const HTTP_INSPECTOR_FILTER = listenerFilter(HTTP_INSPECTOR, HTTP_INSPECTOR_CONFIG);

export function tlsInspectorFilter(
  filterDisabled?: listener.ListenerFilterChainMatchPredicate,
): listener.ListenerFilter {
  return filterDisabled ? listenerFilter(TLS_INSPECTOR, TLS_INSPECTOR_CONFIG, filterDisabled) : TLS_INSPECTOR_FILTER;
}

export function httpInspectorFilter(
  filterDisabled?: listener.ListenerFilterChainMatchPredicate,
): listener.ListenerFilter {
  return filterDisabled ? listenerFilter(HTTP_INSPECTOR, HTTP_INSPECTOR_CONFIG, filterDisabled) : HTTP_INSPECTOR_FILTER;
}

export const ORIGINAL_DST_FILTER: listener.ListenerFilter = listenerFilter(ORIGINAL_DST, {
  case: "typedConfig",
  value: packAny(originalDst.OriginalDstSchema, create(originalDst.OriginalDstSchema)),
});

export const ORIGINAL_SRC_FILTER: listener.ListenerFilter = listenerFilter(ORIGINAL_SRC, {
  case: "typedConfig",
  value: packAny(originalSrc.OriginalSrcSchema, create(originalSrc.OriginalSrcSchema, { mark: ORIGINAL_SRC_MARK })),
});

/** envoy.filters.listener.proxy_protocol: a gateway behind a load balancer that speaks PROXY protocol. */
export function proxyProtocolFilter(): listener.ListenerFilter {
  return listenerFilter("envoy.filters.listener.proxy_protocol", {
    case: "typedConfig",
    value: packAny(proxyProtocol.ProxyProtocolSchema, create(proxyProtocol.ProxyProtocolSchema)),
  });
}

function matchesPlaintextHttp(match: listener.FilterChainMatch | undefined): boolean {
  return (match?.applicationProtocols ?? []).some((p) => PLAINTEXT_HTTP_ALPN.includes(p));
}

/**
 * Sidecar outbound listeners: tls_inspector when a chain matches SNI, then http_inspector when a
 * chain matches plaintext HTTP ALPN (the order matters: TLS is told apart first).
 */
export function sniffingListenerFilters(chains: readonly listener.FilterChain[]): listener.ListenerFilter[] {
  const filters: listener.ListenerFilter[] = [];
  const tls = chains.some((c) => (c.filterChainMatch?.serverNames.length ?? 0) > 0);
  if (tls) filters.push(tlsInspectorFilter());
  if (chains.some((c) => matchesPlaintextHttp(c.filterChainMatch))) filters.push(httpInspectorFilter());
  return filters;
}

/** Which inspectors the chains of one destination port need. */
interface PortInspectors {
  tls: boolean;
  http: boolean;
}

/**
 * virtualInbound's inspectors, each scoped to the ports that need it with `filter_disabled`. Port 0
 * stands for the passthrough chains (any port).
 */
export function inboundInspectors(chains: readonly listener.FilterChain[]): listener.ListenerFilter[] {
  const byPort = new Map<number, PortInspectors>();
  for (const chain of chains) {
    const port = chain.filterChainMatch?.destinationPort ?? 0;
    const seen = byPort.get(port) ?? { tls: false, http: false };
    seen.tls ||= chain.filterChainMatch?.transportProtocol === TLS_TRANSPORT;
    seen.http ||= matchesPlaintextHttp(chain.filterChainMatch);
    byPort.set(port, seen);
  }
  const ports = (want: (i: PortInspectors) => boolean) =>
    [...byPort]
      .filter(([port, i]) => port !== 0 && want(i))
      .map(([port]) => port)
      .sort((a, b) => a - b);
  const filters: listener.ListenerFilter[] = [];
  if ([...byPort.values()].some((i) => i.tls)) {
    // With passthrough chains needing TLS, opt out the ports that do not; otherwise opt in those that do.
    const passthroughNeedsTls = byPort.get(0)?.tls ?? false;
    const listed = passthroughNeedsTls ? ports((i) => !i.tls) : ports((i) => i.tls);
    const disabled =
      listed.length === 0 ? undefined : passthroughNeedsTls ? excludePorts(listed) : includeOnlyPorts(listed);
    filters.push(tlsInspectorFilter(disabled));
  }
  if ([...byPort.values()].some((i) => i.http)) {
    const listed = [...byPort]
      .filter(([, i]) => !i.http)
      .map(([port]) => port)
      .sort((a, b) => a - b);
    filters.push(httpInspectorFilter(listed.length === 0 ? undefined : excludePorts(listed)));
  }
  return filters;
}

/** A predicate true on any of the ports (the filter is disabled there). */
export function excludePorts(ports: readonly number[]): listener.ListenerFilterChainMatchPredicate {
  const ranges = ports.map((p) =>
    create(listener.ListenerFilterChainMatchPredicateSchema, {
      rule: { case: "destinationPortRange", value: create(envoyType.Int32RangeSchema, { start: p, end: p + 1 }) },
    }),
  );
  if (ranges.length === 1) return ranges[0];
  return create(listener.ListenerFilterChainMatchPredicateSchema, {
    rule: {
      case: "orMatch",
      value: create(listener.ListenerFilterChainMatchPredicate_MatchSetSchema, { rules: ranges }),
    },
  });
}

/** A predicate true everywhere but the ports (the filter runs only there). */
function includeOnlyPorts(ports: readonly number[]): listener.ListenerFilterChainMatchPredicate {
  return create(listener.ListenerFilterChainMatchPredicateSchema, {
    rule: { case: "notMatch", value: excludePorts(ports) },
  });
}
