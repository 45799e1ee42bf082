// A simulated Envoy, in the spirit of Istio's pilot/pkg/simulation: given a call, walk the generated
// listeners → filter chain → route config → virtual host → route → cluster and report what matched.
// Only as much of Envoy's matching as the tests need, following Envoy's documented order.
import {
  type admin,
  cluster,
  core,
  hcm,
  listener,
  type matcher,
  route,
  tcpProxy,
  unpackAny,
} from "../../src/api/index.ts";

export interface Call {
  /** Destination IP and port, as the application dialled them. */
  address: string;
  port: number;
  /**
   * How the call reaches the proxy: `outbound` is an application's call captured into virtualOutbound
   * (port 15001), `inbound` a call to the workload captured into virtualInbound (15006), `direct` a call
   * to a listener bound at the address (a gateway).
   */
  mode: "outbound" | "inbound" | "direct";
  /** `http` calls go on to the route config; `tcp` calls stop at the filter chain. */
  protocol: "http" | "tcp";
  /** TLS from the client (the TLS inspector's transport protocol is `tls`, otherwise `raw_buffer`). */
  tls?: boolean;
  /** HTTP/3 over QUIC: the call reaches the UDP listener on the port (TCP listeners otherwise). */
  quic?: boolean;
  sni?: string;
  /** ALPN offered in the TLS handshake; for plaintext HTTP the HTTP inspector's `http/1.1` is used. */
  alpn?: string[];
  /** The Host/:authority header; defaults to the address. */
  host?: string;
  path?: string;
  headers?: Record<string, string>;
}

export interface Result {
  listener?: string;
  filterChain?: string;
  routeConfig?: string;
  virtualHost?: string;
  route?: string;
  /** The matched route, for assertions on what has no name. */
  routeMatch?: route.Route;
  cluster?: string;
  weightedClusters?: { name: string; weight: number }[];
  tcpProxyCluster?: string;
  error?: string;
}

export interface ProxyConfig {
  listeners: listener.Listener[];
  routes: route.RouteConfiguration[];
  clusters: cluster.Cluster[];
}

/** The listeners, routes and clusters of an admin ConfigDump. */
export function fromConfigDump(dump: admin.ConfigDump): ProxyConfig {
  const config: ProxyConfig = { listeners: [], routes: [], clusters: [] };
  for (const any of dump.configs) {
    const section = unpackAny(any);
    if (!section) continue;
    if (section.$typeName === "envoy.admin.v3.ListenersConfigDump") {
      const dumped = section as admin.ListenersConfigDump;
      for (const l of dumped.dynamicListeners) {
        const packed = l.activeState?.listener;
        const unpacked = packed && unpackAny(packed, listener.ListenerSchema);
        if (unpacked) config.listeners.push(unpacked);
      }
    } else if (section.$typeName === "envoy.admin.v3.RoutesConfigDump") {
      const dumped = section as admin.RoutesConfigDump;
      for (const r of dumped.dynamicRouteConfigs) {
        const unpacked = r.routeConfig && unpackAny(r.routeConfig, route.RouteConfigurationSchema);
        if (unpacked) config.routes.push(unpacked);
      }
    } else if (section.$typeName === "envoy.admin.v3.ClustersConfigDump") {
      const dumped = section as admin.ClustersConfigDump;
      for (const c of dumped.dynamicActiveClusters) {
        const unpacked = c.cluster && unpackAny(c.cluster, cluster.ClusterSchema);
        if (unpacked) config.clusters.push(unpacked);
      }
    }
  }
  return config;
}

function socketAddress(l: listener.Listener): { address: string; port: number; udp: boolean } | undefined {
  const a = l.address?.address;
  if (a?.case !== "socketAddress" || a.value.portSpecifier.case !== "portValue") return undefined;
  return {
    address: a.value.address,
    port: a.value.portSpecifier.value,
    udp: a.value.protocol === core.SocketAddress_Protocol.UDP,
  };
}

function listenerAt(config: ProxyConfig, address: string, port: number, quic = false): listener.Listener | undefined {
  const found = config.listeners.filter((l) => {
    const a = socketAddress(l);
    return a?.address === address && a.port === port && a.udp === quic;
  });
  // Envoy rejects an LDS update with two listeners on one address and protocol (or of one name).
  if (found.length > 1) throw new Error(`${found.length} listeners on ${address}:${port}: ${found.map((l) => l.name)}`);
  return found[0];
}

/**
 * The listener that takes the call. For captured outbound calls this is Envoy's use_original_dst hand-off:
 * virtualOutbound passes the connection to the listener bound at the original destination, or the wildcard
 * listener on its port, and keeps it when there is neither.
 */
function selectListener(config: ProxyConfig, call: Call): listener.Listener | undefined {
  if (call.mode === "inbound") return config.listeners.find((l) => l.name === "virtualInbound");
  if (call.mode === "direct") {
    return (
      listenerAt(config, call.address, call.port, call.quic) ?? listenerAt(config, "0.0.0.0", call.port, call.quic)
    );
  }
  const virtual = config.listeners.find((l) => l.name === "virtualOutbound");
  if (!virtual?.useOriginalDst) return virtual;
  return listenerAt(config, call.address, call.port) ?? listenerAt(config, "0.0.0.0", call.port) ?? virtual;
}

// --- Filter chain match -------------------------------------------------------------------------------
// Envoy narrows the chains criterion by criterion, in this order (FilterChainMatch docs): destination_port,
// prefix_ranges, [direct_]source…, server_names, transport_protocol, application_protocols. At each step
// the chains matching most specifically win; only when none matches specifically do the chains that leave
// the criterion empty go on. A chain naming a value that does not match is out.

type Chain = listener.FilterChain;
/** How specifically a chain matches one criterion: undefined = out, 0 = criterion empty (wildcard). */
type Score = (m: listener.FilterChainMatch | undefined) => number | undefined;

function narrow(chains: Chain[], score: Score): Chain[] {
  const scored = chains.map((c) => ({ c, s: score(c.filterChainMatch) })).filter((x) => x.s !== undefined);
  const best = Math.max(0, ...scored.map((x) => x.s ?? 0));
  return scored.filter((x) => x.s === best).map((x) => x.c);
}

function ipv4(ip: string): number | undefined {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + p, 0);
}

function inCidr(ip: string, prefix: string, length: number): boolean {
  const a = ipv4(ip);
  const b = ipv4(prefix);
  if (a === undefined || b === undefined) return ip === prefix;
  const size = 2 ** (32 - length);
  return Math.floor(a / size) === Math.floor(b / size);
}

/** Server names: exact first, then the longest `*.suffix` wildcard. */
function serverNameScore(names: string[], sni: string | undefined): number | undefined {
  if (names.length === 0) return 0;
  if (sni === undefined) return undefined;
  if (names.includes(sni)) return Number.MAX_SAFE_INTEGER;
  const wildcards = names.filter((n) => n.startsWith("*.") && sni.endsWith(n.slice(1)));
  return wildcards.length > 0 ? Math.max(...wildcards.map((n) => n.length)) : undefined;
}

function matchFilterChain(l: listener.Listener, call: Call): Chain | undefined {
  const hasInspector = (name: string) => l.listenerFilters.some((f) => f.name === name);
  const transport = call.quic ? "quic" : call.tls ? "tls" : "raw_buffer";
  const alpn =
    call.alpn ??
    (!call.tls && call.protocol === "http" && hasInspector("envoy.filters.listener.http_inspector")
      ? ["http/1.1"]
      : []);
  let chains = l.filterChains;
  chains = narrow(chains, (m) => (!m?.destinationPort ? 0 : m.destinationPort === call.port ? 1 : undefined));
  chains = narrow(chains, (m) => {
    const ranges = m?.prefixRanges ?? [];
    if (ranges.length === 0) return 0;
    const hits = ranges.filter((r) => inCidr(call.address, r.addressPrefix, r.prefixLen ?? 32));
    // Longest prefix wins; +1 so that a /0 still beats an empty criterion.
    return hits.length > 0 ? Math.max(...hits.map((r) => (r.prefixLen ?? 32) + 1)) : undefined;
  });
  chains = narrow(chains, (m) => serverNameScore(m?.serverNames ?? [], call.sni));
  chains = narrow(chains, (m) => (!m?.transportProtocol ? 0 : m.transportProtocol === transport ? 1 : undefined));
  chains = narrow(chains, (m) => {
    const wanted = m?.applicationProtocols ?? [];
    if (wanted.length === 0) return 0;
    return wanted.some((p) => alpn.includes(p)) ? 1 : undefined;
  });
  // Envoy rejects listeners whose chains' matches overlap, so at most one remains.
  return chains[0] ?? l.defaultFilterChain;
}

// --- HTTP routing -------------------------------------------------------------------------------------

function routeConfigOf(
  manager: hcm.HttpConnectionManager,
  config: ProxyConfig,
): { name?: string; config?: route.RouteConfiguration } {
  const spec = manager.routeSpecifier;
  if (spec.case === "routeConfig") return { name: spec.value.name, config: spec.value };
  if (spec.case === "rds") {
    const name = spec.value.routeConfigName;
    return { name, config: config.routes.find((r) => r.name === name) };
  }
  return {};
}

/**
 * Envoy's virtual host selection: exact domain, then the longest `*.suffix`/`*suffix` wildcard, then the
 * longest `prefix*` wildcard, then `*`.
 */
function matchVirtualHost(rc: route.RouteConfiguration, host: string): route.VirtualHost | undefined {
  const h = host.toLowerCase();
  const domains = rc.virtualHosts.flatMap((vh) => vh.domains.map((d) => ({ vh, d: d.toLowerCase() })));
  const exact = domains.find((x) => x.d === h);
  if (exact) return exact.vh;
  const longest = (xs: typeof domains) => xs.sort((a, b) => b.d.length - a.d.length)[0]?.vh;
  const suffix = longest(domains.filter((x) => x.d.length > 1 && x.d.startsWith("*") && h.endsWith(x.d.slice(1))));
  if (suffix) return suffix;
  const prefix = longest(domains.filter((x) => x.d.length > 1 && x.d.endsWith("*") && h.startsWith(x.d.slice(0, -1))));
  if (prefix) return prefix;
  return domains.find((x) => x.d === "*")?.vh;
}

function fullMatch(regex: string, value: string): boolean {
  return new RegExp(`^(?:${regex})$`).test(value);
}

function stringMatches(m: matcher.StringMatcher, value: string): boolean {
  const fold = (s: string) => (m.ignoreCase ? s.toLowerCase() : s);
  const p = m.matchPattern;
  switch (p.case) {
    case "exact":
      return fold(value) === fold(p.value);
    case "prefix":
      return fold(value).startsWith(fold(p.value));
    case "suffix":
      return fold(value).endsWith(fold(p.value));
    case "contains":
      return fold(value).includes(fold(p.value));
    case "safeRegex":
      return fullMatch(p.value.regex, value);
    default:
      throw new Error(`string matcher ${p.case} not simulated`);
  }
}

function headerMatches(m: route.HeaderMatcher, headers: Record<string, string>): boolean {
  const value = headers[m.name.toLowerCase()] ?? (m.treatMissingHeaderAsEmpty ? "" : undefined);
  const spec = m.headerMatchSpecifier;
  let matched: boolean;
  if (spec.case === "presentMatch") matched = (value !== undefined) === spec.value;
  else if (value === undefined)
    return false; // a missing header fails even inverted matchers
  else if (spec.case === "stringMatch") matched = stringMatches(spec.value, value);
  else if (spec.case === "exactMatch") matched = value === spec.value;
  else if (spec.case === "prefixMatch") matched = value.startsWith(spec.value);
  else if (spec.case === "suffixMatch") matched = value.endsWith(spec.value);
  else if (spec.case === "containsMatch") matched = value.includes(spec.value);
  else if (spec.case === "safeRegexMatch") matched = fullMatch(spec.value.regex, value);
  else if (spec.case === undefined) matched = true;
  else throw new Error(`header matcher ${spec.case} not simulated`);
  return matched !== m.invertMatch;
}

function routeMatches(r: route.Route, path: string, headers: Record<string, string>): boolean {
  const m = r.match;
  if (!m) return false;
  const [rawPath, query = ""] = path.split("?", 2) as [string, string?];
  const sensitive = m.caseSensitive ?? true;
  const fold = (s: string) => (sensitive ? s : s.toLowerCase());
  const spec = m.pathSpecifier;
  let pathOk: boolean;
  if (spec.case === "prefix") pathOk = fold(rawPath).startsWith(fold(spec.value));
  else if (spec.case === "path") pathOk = fold(rawPath) === fold(spec.value);
  else if (spec.case === "safeRegex") pathOk = fullMatch(spec.value.regex, rawPath);
  else if (spec.case === "pathSeparatedPrefix")
    pathOk = fold(rawPath) === fold(spec.value) || fold(rawPath).startsWith(`${fold(spec.value)}/`);
  else throw new Error(`path matcher ${spec.case} not simulated`);
  if (!pathOk) return false;
  if (!m.headers.every((h) => headerMatches(h, headers))) return false;
  const params = new URLSearchParams(query);
  return m.queryParameters.every((q) => {
    const value = params.get(q.name);
    const qs = q.queryParameterMatchSpecifier;
    if (qs.case === "presentMatch") return (value !== null) === qs.value;
    if (qs.case === "stringMatch") return value !== null && stringMatches(qs.value, value);
    return value !== null;
  });
}

function routeHttp(manager: hcm.HttpConnectionManager, config: ProxyConfig, call: Call, result: Result): Result {
  const { name, config: rc } = routeConfigOf(manager, config);
  result.routeConfig = name;
  if (!rc) return { ...result, error: `route config ${name ?? "(none)"} not found` };
  const headers = Object.fromEntries(Object.entries(call.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const authority = call.host ?? call.address;
  // ignore_port_in_host_matching: the host is matched without its `:port`.
  const host = rc.ignorePortInHostMatching ? authority.replace(/:\d+$/, "") : authority;
  const vh = matchVirtualHost(rc, host);
  if (!vh) return { ...result, error: "no virtual host matched" };
  result.virtualHost = vh.name;
  // Envoy takes the first route whose match holds.
  const r = vh.routes.find((candidate) => routeMatches(candidate, call.path ?? "/", headers));
  if (!r) return { ...result, error: "no route matched" };
  result.route = r.name;
  result.routeMatch = r;
  if (r.action.case !== "route") return result;
  const cs = r.action.value.clusterSpecifier;
  if (cs.case === "cluster") result.cluster = cs.value;
  else if (cs.case === "weightedClusters")
    result.weightedClusters = cs.value.clusters.map((c) => ({ name: c.name, weight: c.weight ?? 0 }));
  return result;
}

/** Checks that every cluster the call ends at is one the proxy was given (hand-written configs give none). */
function checkClusters(result: Result, config: ProxyConfig): Result {
  if (config.clusters.length === 0) return result;
  const names = [result.cluster, result.tcpProxyCluster, ...(result.weightedClusters ?? []).map((c) => c.name)];
  const missing = names.filter((n) => n !== undefined && !config.clusters.some((c) => c.name === n));
  return missing.length > 0 && !result.error ? { ...result, error: `unknown cluster ${missing.join(", ")}` } : result;
}

export function simulate(input: admin.ConfigDump | ProxyConfig, call: Call): Result {
  const config = "configs" in input ? fromConfigDump(input) : input;
  const l = selectListener(config, call);
  if (!l) return { error: "no listener matched" };
  const result: Result = { listener: l.name };
  const chain = matchFilterChain(l, call);
  if (!chain) return { ...result, error: "no filter chain matched" };
  result.filterChain = chain.name;
  for (const filter of chain.filters) {
    if (filter.configType.case !== "typedConfig") continue;
    const any = filter.configType.value;
    if (call.protocol === "http") {
      const manager = unpackAny(any, hcm.HttpConnectionManagerSchema);
      if (manager) return checkClusters(routeHttp(manager, config, call, result), config);
    }
    const proxy = unpackAny(any, tcpProxy.TcpProxySchema);
    if (proxy) {
      const cs = proxy.clusterSpecifier;
      if (cs.case === "cluster") result.tcpProxyCluster = cs.value;
      else if (cs.case === "weightedClusters")
        result.weightedClusters = cs.value.clusters.map((c) => ({ name: c.name, weight: c.weight }));
      return checkClusters(result, config);
    }
  }
  return { ...result, error: "no terminal filter for the call" };
}
