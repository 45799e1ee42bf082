// A gateway's RouteConfiguration for one route name (Istio gateway.go buildGatewayHTTPRouteConfig):
// one virtual host per host shared by a server and a VirtualService bound to its gateway, routes of
// every such VirtualService with catch-alls last, `require_tls` for httpsRedirect servers, virtual
// hosts with the very same routes collapsed into one, and a 404 `blackhole:<port>` host when none.
import { create } from "@bufbuild/protobuf";
import { preEncoded, route } from "../../api/index.ts";
import type { GatewayServers } from "../../config/index.ts";
import { compareHostSpecificity, hostSubsetOf } from "../../model/index.ts";
import { type Memos, NO_MEMOS } from "../../util/index.ts";
import { STATEFUL_SESSION_FILTER, statefulSessionConfig, statefulSessionPerRoute } from "../httpfilter/index.ts";
import { byName, MAX_DIRECT_RESPONSE_BODY_SIZE_BYTES } from "./config.ts";
import { sortCatchAllLast } from "./match.ts";
import { newRouteConfiguration, newVirtualHost } from "./message.ts";
import { routeProxyHeaders } from "./proxy-headers.ts";
import { buildVirtualServiceRoutes } from "./translate.ts";
import type { MeshConfig, ProxyNode, RouteContext, Service, VirtualService } from "./types.ts";
import { domainName } from "./vhost.ts";

/** A server and its Gateway; the model's MergedServer is one. */
export interface GatewayServerBinding {
  /** The Gateway owning the server, as `<namespace>/<name>` (what VirtualService `gateways` name). */
  gatewayName: string;
  server: GatewayServers;
}

export interface GatewayRouteInput {
  routeName: string;
  proxy: ProxyNode;
  mesh: MeshConfig;
  /** The merged servers served under this route name (MergedGateway.serversByRouteName); empty when the gateway is gone. */
  servers: readonly GatewayServerBinding[];
  /** The VirtualServices bound to a gateway (`<ns>/<name>`) the proxy sees: VirtualServiceIndex.forGateway(proxy namespace, gateway). */
  virtualServicesForGateway(gateway: string): readonly VirtualService[];
  /** The services VirtualService destinations may name. */
  lookupService(hostname: string): Service | undefined;
  hashPolicy?: RouteContext["hashPolicy"];
  persistentSessions?: RouteContext["persistentSessions"];
  /** The servers of this route name are also served over QUIC (MergedGateway.http3Routes): routes advertise HTTP/3. */
  http3?: boolean;
  /**
   * Routes already built for this proxy in this push, kept by the caller across its route names (all
   * other inputs are the same for them); without it, routes are shared within this configuration only.
   */
  routesMemo?: GatewayRoutesMemo;
  /** Where the builders keep what they memoise (the xDS cache's tables); without it nothing is kept. */
  memos?: Memos;
}

/** A VirtualService's routes for one gateway, and the server they were built for if building read it. */
interface BuiltRoutes {
  gateway: string;
  http3: boolean;
  /** The server's port and TLS setting, when the routes read them; otherwise they hold for any server. */
  server?: { port: number; isTls: boolean };
  routes: route.Route[];
  /** The routes are pre-encoded: done when a second configuration takes them. */
  encoded: boolean;
}

/**
 * Routes built per VirtualService: a gateway's route configurations (its HTTP and HTTPS servers) share
 * those that never read the server's port or TLS setting, and those built for the same port and TLS.
 */
export type GatewayRoutesMemo = WeakMap<VirtualService, BuiltRoutes[]>;

/**
 * The RouteContext of a gateway server, noting (as krt notes a fetch) whether building read the server's
 * port or TLS setting: only what depends on the server does (a match on port, a redirect, a destination
 * without port, the operation of a route to several clusters, HTTP/3's alt-svc).
 */
class ServerRouteContext implements RouteContext {
  readonly proxy: ProxyNode;
  readonly mesh: MeshConfig;
  readonly memos: Memos;
  readonly gatewayNames: ReadonlySet<string>;
  readonly lookupService: RouteContext["lookupService"];
  readonly hashPolicy: RouteContext["hashPolicy"];
  readonly persistentSessions: RouteContext["persistentSessions"];
  readonly advertiseHttp3: RouteContext["advertiseHttp3"];
  readServer = false;

  constructor(
    input: GatewayRouteInput,
    gateway: string,
    private readonly port: number,
    private readonly tls: boolean,
  ) {
    this.proxy = input.proxy;
    this.mesh = input.mesh;
    this.memos = input.memos ?? NO_MEMOS;
    this.gatewayNames = new Set([gateway]);
    this.lookupService = input.lookupService;
    this.hashPolicy = input.hashPolicy;
    this.persistentSessions = input.persistentSessions;
    this.advertiseHttp3 = input.http3;
  }

  get listenerPort(): number {
    this.readServer = true;
    return this.port;
  }

  get isTls(): boolean {
    this.readServer = true;
    return this.tls;
  }
}

/** The VirtualService's routes for a server of `gateway`: from the memo when built for an equivalent server. */
function serverRoutes(
  memo: GatewayRoutesMemo,
  input: GatewayRouteInput,
  vs: VirtualService,
  gateway: string,
  port: number,
  isTls: boolean,
): route.Route[] {
  const http3 = input.http3 === true;
  let built = memo.get(vs);
  for (const b of built ?? []) {
    if (b.gateway !== gateway || b.http3 !== http3) continue;
    if (b.server && (b.server.port !== port || b.server.isTls !== isTls)) continue;
    // Held by several configurations: encoded once, each copies the bytes.
    if (!b.encoded) for (const r of b.routes) preEncoded(route.RouteSchema, r);
    b.encoded = true;
    return b.routes;
  }
  const ctx = new ServerRouteContext(input, gateway, port, isTls);
  const routes = buildVirtualServiceRoutes(vs, ctx);
  if (!built) {
    built = [];
    memo.set(vs, built);
  }
  built.push({ gateway, http3, server: ctx.readServer ? { port, isTls } : undefined, routes, encoded: false });
  return routes;
}

/** Istio's host.Names.Intersection: for each covering pair, the narrower host. */
function intersectHosts(serverHosts: readonly string[], vsHosts: readonly string[]): string[] {
  const out: string[] = [];
  for (const s of serverHosts) {
    for (const v of vsHosts) {
      const narrower = hostSubsetOf(s, v) ? s : hostSubsetOf(v, s) ? v : undefined;
      if (narrower !== undefined && !out.includes(narrower)) out.push(narrower);
    }
  }
  return out;
}

/** Server hosts (`ns/host` with ns a namespace, `*` or `.`; or a bare host) a VirtualService in `namespace` may bind to. */
function serverHostsFor(hosts: readonly string[], namespace: string, gatewayNamespace: string): string[] {
  const out: string[] = [];
  for (const h of hosts) {
    const slash = h.indexOf("/");
    if (slash === -1) {
      out.push(h);
      continue;
    }
    const ns = h.slice(0, slash);
    if (ns === "*" || ns === namespace || (ns === "." && namespace === gatewayNamespace)) out.push(h.slice(slash + 1));
  }
  return out;
}

function emptyRouteConfiguration(name: string): route.RouteConfiguration {
  const config = newRouteConfiguration();
  config.name = name;
  config.validateClusters = false;
  return config;
}

function sameRoutes(a: readonly route.Route[], b: readonly route.Route[]): boolean {
  return a.length === b.length && a.every((r, i) => r === b[i]);
}

/** One host's routes while a configuration is gathered; virtual hosts are made only for those left after collapsing. */
interface HostRoutes {
  /** The lower-cased hosts answered: the host, then those collapsed into it. */
  domains: string[];
  /** The port of the first server with the host, in the virtual host's name. */
  port: number;
  routes: route.Route[];
  requireTls: boolean;
}

/**
 * Istio's collapseDuplicateRoutes (PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION): hosts with the very same
 * route list share one virtual host, named after the first host in Istio's host order (most specific first).
 */
function collapseDuplicates(hosts: Map<string, HostRoutes>): HostRoutes[] {
  const out: HostRoutes[] = [];
  // Candidates by their first route (routes are shared by identity), so a gateway with thousands of
  // hosts does not compare each with every earlier one.
  const byFirstRoute = new Map<route.Route | undefined, HostRoutes[]>();
  for (const hostname of [...hosts.keys()].sort(compareHostSpecificity)) {
    const host = hosts.get(hostname) as HostRoutes;
    let candidates = byFirstRoute.get(host.routes[0]);
    if (!candidates) {
      candidates = [];
      byFirstRoute.set(host.routes[0], candidates);
    }
    const primary = candidates.find((p) => p.requireTls === host.requireTls && sameRoutes(p.routes, host.routes));
    if (primary) primary.domains.push(hostname);
    else {
      out.push(host);
      candidates.push(host);
    }
  }
  return out;
}

/** The virtual host of a host left after collapsing, its catch-all routes last. */
function hostVirtualHost(
  host: HostRoutes,
  includeRequestAttemptCount: boolean,
  input: GatewayRouteInput,
): route.VirtualHost {
  const hostname = host.domains[0];
  const vhost = newVirtualHost();
  vhost.name = domainName(hostname, host.port);
  vhost.domains = host.domains;
  vhost.routes = sortCatchAllLast(host.routes);
  vhost.includeRequestAttemptCount = includeRequestAttemptCount;
  if (host.requireTls) vhost.requireTls = route.VirtualHost_TlsRequirementType.ALL;
  // A service of exactly this host labelled for persistent sessions configures its virtual host.
  const service = input.persistentSessions ? input.lookupService(hostname) : undefined;
  const session = service && statefulSessionConfig(service.labels);
  if (session) vhost.typedPerFilterConfig[STATEFUL_SESSION_FILTER] = statefulSessionPerRoute(session);
  return vhost;
}

/** Adds routes to the host's entry, made on first use; an httpsRedirect server makes it TLS-only. */
function addToHost(
  hosts: Map<string, HostRoutes>,
  host: string,
  port: number,
  routes: readonly route.Route[],
  httpsRedirect: boolean,
): void {
  const hostname = host.toLowerCase();
  let entry = hosts.get(hostname);
  if (!entry) {
    entry = { domains: [hostname], port, routes: [], requireTls: false };
    hosts.set(hostname, entry);
  }
  for (const r of routes) entry.routes.push(r);
  if (httpsRedirect) entry.requireTls = true;
}

export function buildGatewayRouteConfiguration(input: GatewayRouteInput): route.RouteConfiguration {
  const { proxy, mesh, servers } = input;
  if (servers.length === 0) return emptyRouteConfiguration(input.routeName);

  const memo = input.routesMemo ?? new WeakMap();
  // Routes per gateway and VirtualService, taken once (for the first server that needs them), as Istio.
  const routeCache = new Map<string, Map<VirtualService, route.Route[]>>();
  const hosts = new Map<string, HostRoutes>();
  for (const { gatewayName: gateway, server } of servers) {
    const port = server.port.number;
    const gatewayNamespace = gateway.slice(0, gateway.indexOf("/"));
    const httpsRedirect = server.tls?.httpsRedirect === true;
    let gatewayRoutes = routeCache.get(gateway);
    if (!gatewayRoutes) {
      gatewayRoutes = new Map();
      routeCache.set(gateway, gatewayRoutes);
    }
    for (const vs of input.virtualServicesForGateway(gateway)) {
      const vsNamespace = vs.metadata.namespace ?? "";
      const boundHosts = intersectHosts(
        serverHostsFor(server.hosts, vsNamespace, gatewayNamespace),
        vs.spec?.hosts ?? [],
      );
      if (boundHosts.length === 0) continue;
      let routes = gatewayRoutes.get(vs);
      if (routes === undefined) {
        routes = serverRoutes(memo, input, vs, gateway, port, server.tls !== undefined);
        // A VirtualService with no route for this gateway is skipped (and tried again for the next server).
        if (routes.length === 0) continue;
        gatewayRoutes.set(vs, routes);
      }
      for (const host of boundHosts) addToHost(hosts, host, port, routes, httpsRedirect);
    }
    // An httpsRedirect server redirects its hosts even without a VirtualService.
    if (!httpsRedirect) continue;
    for (const host of server.hosts) addToHost(hosts, host, port, [], true);
  }

  let virtualHosts: route.VirtualHost[];
  if (hosts.size === 0) {
    // No host: Envoy answers 404 to everything.
    virtualHosts = [
      create(route.VirtualHostSchema, { name: domainName("blackhole", servers[0].server.port.number), domains: ["*"] }),
    ];
  } else {
    const { includeRequestAttemptCount } = routeProxyHeaders(mesh);
    virtualHosts = collapseDuplicates(hosts).map((host) => hostVirtualHost(host, includeRequestAttemptCount, input));
  }
  virtualHosts.sort(byName);
  const config = newRouteConfiguration();
  config.name = input.routeName;
  config.virtualHosts = virtualHosts;
  config.validateClusters = false;
  config.ignorePortInHostMatching = proxy.generator !== "grpc";
  config.maxDirectResponseBodySizeBytes = MAX_DIRECT_RESPONSE_BODY_SIZE_BYTES;
  return config;
}
