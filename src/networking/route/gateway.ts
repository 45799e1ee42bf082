// A gateway's RouteConfiguration for one route name (Istio gateway.go buildGatewayHTTPRouteConfig):
// one virtual host per host shared by a server and a VirtualService bound to its gateway, routes of
// every such VirtualService with catch-alls last, `require_tls` for httpsRedirect servers, virtual
// hosts with the very same routes collapsed into one, and a 404 `blackhole:<port>` host when none.
import { create } from "@bufbuild/protobuf";
import { route } from "../../api/index.ts";
import type { GatewayServers } from "../../config/index.ts";
import { hostSubsetOf } from "../../model/index.ts";
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

/**
 * Istio's collapseDuplicateRoutes (PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION): virtual hosts with the
 * very same route list share one, named after the alphabetically first host.
 */
function collapseDuplicates(vhosts: Map<string, route.VirtualHost>): route.VirtualHost[] {
  const out: route.VirtualHost[] = [];
  for (const host of [...vhosts.keys()].sort()) {
    const vh = vhosts.get(host) as route.VirtualHost;
    const primary = out.find(
      (p) =>
        p.includeRequestAttemptCount === vh.includeRequestAttemptCount &&
        p.requireTls === vh.requireTls &&
        sameRoutes(p.routes, vh.routes),
    );
    if (primary) primary.domains.push(...vh.domains);
    else out.push(vh);
  }
  return out;
}

export function buildGatewayRouteConfiguration(input: GatewayRouteInput): route.RouteConfiguration {
  const { proxy, mesh, servers } = input;
  if (servers.length === 0) return emptyRouteConfiguration(input.routeName);
  const { includeRequestAttemptCount } = routeProxyHeaders(mesh);

  // Routes per gateway and VirtualService, built once (for the first server that needs them), as Istio.
  const routeCache = new Map<string, route.Route[]>();
  const vhosts = new Map<string, route.VirtualHost>();
  /** Adds routes to the host's virtual host, made on first use; an httpsRedirect server makes it TLS-only. */
  const addToHost = (host: string, port: number, routes: readonly route.Route[], httpsRedirect: boolean) => {
    const hostname = host.toLowerCase();
    let vhost = vhosts.get(hostname);
    if (!vhost) {
      vhost = newVirtualHost();
      vhost.name = domainName(hostname, port);
      vhost.domains.push(hostname);
      vhost.includeRequestAttemptCount = includeRequestAttemptCount;
      // A service of exactly this host labelled for persistent sessions configures its virtual host.
      const service = input.persistentSessions ? input.lookupService(hostname) : undefined;
      const session = service && statefulSessionConfig(service.labels);
      if (session) vhost.typedPerFilterConfig[STATEFUL_SESSION_FILTER] = statefulSessionPerRoute(session);
      vhosts.set(hostname, vhost);
    }
    vhost.routes.push(...routes);
    if (httpsRedirect) vhost.requireTls = route.VirtualHost_TlsRequirementType.ALL;
  };
  for (const { gatewayName: gateway, server } of servers) {
    const port = server.port.number;
    const gatewayNamespace = gateway.slice(0, gateway.indexOf("/"));
    const httpsRedirect = server.tls?.httpsRedirect === true;
    for (const vs of input.virtualServicesForGateway(gateway)) {
      const vsNamespace = vs.metadata.namespace ?? "";
      const hosts = intersectHosts(serverHostsFor(server.hosts, vsNamespace, gatewayNamespace), vs.spec?.hosts ?? []);
      if (hosts.length === 0) continue;
      const key = `${gateway}\n${vs.metadata.name ?? ""}/${vsNamespace}`;
      let routes = routeCache.get(key);
      if (routes === undefined) {
        routes = buildVirtualServiceRoutes(vs, {
          proxy,
          mesh,
          listenerPort: port,
          gatewayNames: new Set([gateway]),
          isTls: server.tls !== undefined,
          lookupService: input.lookupService,
          hashPolicy: input.hashPolicy,
          persistentSessions: input.persistentSessions,
          advertiseHttp3: input.http3,
        });
        // A VirtualService with no route for this gateway is skipped (and tried again for the next server).
        if (routes.length === 0) continue;
        routeCache.set(key, routes);
      }
      for (const host of hosts) addToHost(host, port, routes, httpsRedirect);
    }
    // An httpsRedirect server redirects its hosts even without a VirtualService.
    if (!httpsRedirect) continue;
    for (const host of server.hosts) addToHost(host, port, [], true);
  }

  let virtualHosts: route.VirtualHost[];
  if (vhosts.size === 0) {
    // No host: Envoy answers 404 to everything.
    virtualHosts = [
      create(route.VirtualHostSchema, { name: domainName("blackhole", servers[0].server.port.number), domains: ["*"] }),
    ];
  } else {
    virtualHosts = collapseDuplicates(vhosts);
    for (const vh of virtualHosts) vh.routes = sortCatchAllLast(vh.routes);
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
