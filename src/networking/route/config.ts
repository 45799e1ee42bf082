// A sidecar's outbound RouteConfiguration for one route name (Istio httproute.go
// buildSidecarOutboundHTTPRouteConfig, BuildSidecarOutboundVirtualHosts, route.go
// BuildSidecarVirtualHostWrapper): virtual hosts from the VirtualServices that apply (in the caller's
// order: the first to claim a host wins), default virtual hosts for the other HTTP services of the
// port, sorted by name, then the catch-all for unknown hosts.
import { create } from "@bufbuild/protobuf";
import { preEncoded, route } from "../../api/index.ts";
import type { Destination } from "../../config/index.ts";
import {
  hostsMatch,
  isWildcard,
  mostSpecificHostMatch,
  type PushStatusReporter,
  usesGatewaySemantics,
} from "../../model/index.ts";
import { type Memos, NO_MEMOS, weakTable } from "../../util/index.ts";
import { STATEFUL_SESSION_FILTER, statefulSessionConfig, statefulSessionPerRoute } from "../httpfilter/index.ts";
import { buildDefaultOutboundRoute } from "./default-route.ts";
import { newRouteConfiguration, newVirtualHost } from "./message.ts";
import { routeProxyHeaders } from "./proxy-headers.ts";
import { buildVirtualServiceRoutes } from "./translate.ts";
import {
  MESH_GATEWAY,
  type MeshConfig,
  type ProxyNode,
  type RouteContext,
  type Service,
  type VirtualService,
} from "./types.ts";
import {
  ALLOW_ANY_DYNAMIC_DNS,
  catchAllVirtualHost,
  DomainSet,
  domainName,
  ipv6Compliant,
  NO_PORT,
  type OutboundTrafficMode,
  serviceDomains,
} from "./vhost.ts";

/** Envoy's 4 KiB direct-response body limit raised to the 1 MiB Istio's validation allows. */
export const MAX_DIRECT_RESPONSE_BODY_SIZE_BYTES = 1024 * 1024;
/** The route name of the HTTP proxy listener (meshConfig proxyHttpPort). */
export const HTTP_PROXY_ROUTE_NAME = "http_proxy";

export interface SidecarRouteInput {
  /** The RDS name: a port (`"8080"`), a sniffed VIP listener's `<fqdn>:<port>`, or `http_proxy`. */
  routeName: string;
  proxy: ProxyNode;
  mesh: MeshConfig;
  /** The services the proxy sees (its Sidecar egress scope); only those with the route's port are used. */
  services: readonly Service[];
  /**
   * The VirtualServices bound to `mesh` the proxy sees, in Istio's order (oldest first), short names
   * resolved and delegates merged: the model's VirtualServiceIndex.forGateway(namespace, "mesh").
   */
  virtualServices: readonly VirtualService[];
  /** The proxy's outbound traffic policy (Sidecar, else mesh); defaults to the mesh's. */
  outboundTrafficPolicy?: { mode?: OutboundTrafficMode; egressProxy?: Destination };
  /** DestinationRule consistent-hash policies, as RouteContext.hashPolicy. */
  hashPolicy?: RouteContext["hashPolicy"];
  persistentSessions?: RouteContext["persistentSessions"];
  /** Where a virtual host dropped or cut for duplicate domains is reported (pilot_vservice_dup_domain). */
  report?: PushStatusReporter;
  /**
   * The sorted virtual hosts of `listenerPort` from `build`, or from an earlier route name of the same
   * port and inputs: each sniffed `<fqdn>:<port>` name takes one virtual host out of its port's list.
   */
  portVirtualHosts?: (listenerPort: number, build: () => route.VirtualHost[]) => readonly route.VirtualHost[];
  /** Where the builders keep what they memoise (the xDS cache's tables); without it nothing is kept. */
  memos?: Memos;
}

interface ParsedRouteName {
  listenerPort: number;
  /** A `<fqdn>:<port>` route of a sniffed listener: only that service's virtual host, no catch-all. */
  sniffed: boolean;
}

/** Istio's extractListenerPort; undefined for names a sidecar's outbound routes never have. */
export function parseSidecarRouteName(routeName: string): ParsedRouteName | undefined {
  if (routeName === HTTP_PROXY_ROUTE_NAME || routeName.startsWith("unix://"))
    return { listenerPort: 0, sniffed: false };
  const colon = routeName.lastIndexOf(":");
  const portText = colon === -1 ? routeName : routeName.slice(colon + 1);
  if (!/^\d+$/.test(portText)) return undefined;
  return { listenerPort: Number(portText), sniffed: colon !== -1 };
}

/** HTTP, HTTP2, gRPC, gRPC-Web, HTTP_PROXY, and undeclared (sniffed) ports carry HTTP routes. */
const HTTP_OR_SNIFFED = new Set(["HTTP", "HTTP2", "GRPC", "GRPC-Web", "HTTP_PROXY", "UnsupportedProtocol"]);

interface VirtualHostGroup {
  port: number;
  services: Service[];
  /** VirtualService hosts that are not registry services (only routed on port 80). */
  virtualServiceHosts: string[];
  routes: route.Route[];
}

// Each service reduced to one port, per service object (kept while the service is unchanged) and
// port: one copy for every push, which also keys the service's domains below.
const SERVICES_ON_PORT = weakTable<Service, Map<number, Service | undefined>>("route/servicesOnPort");

/** The service reduced to `port` with a lower-cased hostname; undefined when it has no such port. */
function serviceOnPort(memos: Memos, svc: Service, port: number): Service | undefined {
  const servicesOnPort = memos.weak(SERVICES_ON_PORT);
  let byPort = servicesOnPort.get(svc);
  if (!byPort) {
    byPort = new Map();
    servicesOnPort.set(svc, byPort);
  }
  if (!byPort.has(port)) {
    const servicePort = svc.ports.find((p) => p.port === port);
    byPort.set(port, servicePort && { ...svc, hostname: svc.hostname.toLowerCase(), ports: [servicePort] });
  }
  return byPort.get(port);
}

/** Services by lower-cased hostname; on a real port, each reduced to that port. */
function servicesForPort(memos: Memos, services: readonly Service[], listenerPort: number): Map<string, Service> {
  const out = new Map<string, Service>();
  for (const svc of services) {
    if (listenerPort === 0) {
      out.set(svc.hostname, svc);
      continue;
    }
    const reduced = serviceOnPort(memos, svc, listenerPort);
    if (reduced) out.set(reduced.hostname, reduced);
  }
  return out;
}

/** A service's virtual host domains and the alternate names among them (serviceDomains). */
type ServiceDomains = ReturnType<typeof serviceDomains>;

// serviceDomains per service object, port and proxy DNS domain: built once, for every push and route
// configuration; their lists are never changed (deduplication copies).
// By port, then DNS domain: no key string made per lookup.
const DOMAINS_BY_SERVICE = weakTable<Service, Map<number, Map<string, ServiceDomains>>>("route/serviceDomains");

function sharedServiceDomains(memos: Memos, svc: Service, port: number, proxyDomain: string): ServiceDomains {
  const domainsByService = memos.weak(DOMAINS_BY_SERVICE);
  let byPort = domainsByService.get(svc);
  if (!byPort) {
    byPort = new Map();
    domainsByService.set(svc, byPort);
  }
  let byDomain = byPort.get(port);
  if (!byDomain) {
    byDomain = new Map();
    byPort.set(port, byDomain);
  }
  let domains = byDomain.get(proxyDomain);
  if (!domains) {
    domains = serviceDomains(svc, port, proxyDomain);
    byDomain.set(proxyDomain, domains);
  }
  return domains;
}

// The default route of a service port without a hash policy, per service object (reduced to its port,
// kept while the service is unchanged) and port, for the mesh config it was built with: every route
// configuration and push shares one, pre-encoded (each route configuration copies its bytes).
const DEFAULT_ROUTES = weakTable<Service, Map<number, { mesh: MeshConfig; route: route.Route }>>("route/defaultRoutes");

function sharedDefaultRoute(memos: Memos, svc: Service, port: number, mesh: MeshConfig): route.Route {
  const defaultRoutes = memos.weak(DEFAULT_ROUTES);
  let byPort = defaultRoutes.get(svc);
  if (!byPort) {
    byPort = new Map();
    defaultRoutes.set(svc, byPort);
  }
  let built = byPort.get(port);
  if (built?.mesh !== mesh) {
    built = { mesh, route: preEncoded(route.RouteSchema, buildDefaultOutboundRoute(memos, svc.hostname, port, mesh)) };
    byPort.set(port, built);
  }
  return built.route;
}

/** Istio's selectVirtualServices: VirtualServices with a host matching one of the services. */
function selectVirtualServices(vss: readonly VirtualService[], services: Map<string, Service>): VirtualService[] {
  const hosts = [...services.keys()];
  return vss.filter((vs) =>
    (vs.spec?.hosts ?? []).some((h) => {
      const lc = h.toLowerCase();
      if (services.has(lc)) return true;
      return hosts.some((s) => (isWildcard(lc) ? hostsMatch(lc, s) : isWildcard(s) && hostsMatch(s, lc)));
    }),
  );
}

function vsKey(vs: VirtualService): string {
  return `${vs.metadata.namespace ?? ""}/${vs.metadata.name ?? ""}`;
}

/**
 * Istio's computeWildcardHostVirtualServiceIndex: for each service, the VirtualService that names it
 * exactly, else the one with the most specific wildcard host covering it (first VirtualService per host).
 */
function wildcardIndex(vss: readonly VirtualService[], services: Iterable<Service>): Map<string, string> {
  const byHost = new Map<string, string>();
  for (const vs of vss) {
    for (const h of vs.spec?.hosts ?? []) if (!byHost.has(h)) byHost.set(h, vsKey(vs));
  }
  // An exact host wins; only wildcard hosts can match otherwise.
  const wildcards = [...byHost.keys()].filter(isWildcard);
  const out = new Map<string, string>();
  for (const svc of services) {
    const host = byHost.has(svc.hostname) ? svc.hostname : mostSpecificHostMatch(svc.hostname, wildcards);
    if (host !== undefined) out.set(svc.hostname, byHost.get(host) as string);
  }
  return out;
}

/** Istio's separateVSHostsAndServices: the VirtualService's registry services, and its other hosts. */
function separateHosts(vs: VirtualService, services: Map<string, Service>, index: Map<string, string>) {
  const hosts: string[] = [];
  const matching: Service[] = [];
  const wildcards: string[] = [];
  for (const h of vs.spec?.hosts ?? []) {
    const lc = h.toLowerCase();
    if (isWildcard(lc)) wildcards.push(lc);
    else if (services.has(lc)) matching.push(services.get(lc) as Service);
    else hosts.push(h);
  }
  for (const w of wildcards) {
    // Gateway API hostnames are never expanded to registry services.
    if (usesGatewaySemantics(vs)) {
      hosts.push(w);
      continue;
    }
    let found = false;
    for (const [svcHost, svc] of services) {
      if (!hostsMatch(svcHost, w)) continue;
      found = true;
      if (index.get(svcHost) === vsKey(vs)) matching.push(svc);
    }
    if (!found) hosts.push(w);
  }
  return { hosts, matching };
}

/** The virtual hosts (before domains) of one port, from the VirtualServices then the unclaimed services. */
function virtualHostGroups(
  input: SidecarRouteInput,
  listenerPort: number,
  services: Map<string, Service>,
  ctx: RouteContext,
) {
  const vss = listenerPort === 80 ? input.virtualServices : selectVirtualServices(input.virtualServices, services);
  const index = wildcardIndex(input.virtualServices, services.values());
  const groups: VirtualHostGroup[] = [];
  for (const vs of vss) {
    const routes = buildVirtualServiceRoutes(vs, ctx);
    if (routes.length === 0) continue;
    const { hosts, matching } = separateHosts(vs, services, index);
    // Gateway API mesh routes: only for a proxy in the route's namespace or a service in it.
    const vsNamespace = vs.metadata.namespace ?? "";
    if (
      usesGatewaySemantics(vs) &&
      !matching.some((s) => s.namespace === vsNamespace || input.proxy.configNamespace === vsNamespace)
    ) {
      continue;
    }
    const byPort = new Map<number, Service[]>();
    for (const svc of matching) {
      for (const p of svc.ports) {
        if (!HTTP_OR_SNIFFED.has(p.protocol)) continue;
        const onPort = byPort.get(p.port);
        if (onPort) onPort.push(svc);
        else byPort.set(p.port, [svc]);
      }
    }
    // Hosts outside the registry are only routed on port 80.
    if (byPort.size === 0 && listenerPort === 80) byPort.set(80, []);
    for (const [port, svcs] of byPort) groups.push({ port, services: svcs, virtualServiceHosts: hosts, routes });
  }
  const claimed = new Set<string>();
  for (const g of groups) for (const svc of g.services) claimed.add(svc.hostname);
  for (const svc of services.values()) {
    // Aliases only serve as route targets.
    if (claimed.has(svc.hostname) || svc.resolution === "Alias") continue;
    for (const p of svc.ports) {
      if (!HTTP_OR_SNIFFED.has(p.protocol)) continue;
      const hash = input.hashPolicy?.({ host: svc.hostname, port: { number: p.port } });
      const defaultRoute = hash
        ? buildDefaultOutboundRoute(ctx.memos, svc.hostname, p.port, input.mesh, hash)
        : sharedDefaultRoute(ctx.memos, svc, p.port, input.mesh);
      groups.push({ port: p.port, services: [svc], virtualServiceHosts: [], routes: [defaultRoute] });
    }
  }
  return groups;
}

/** One route configuration's virtual hosts being built: what they share, and the names and domains taken. */
interface VirtualHostsBuild {
  input: SidecarRouteInput;
  memos: Memos;
  listenerPort: number;
  includeRequestAttemptCount: boolean;
  names: Set<string>;
  domainSet: DomainSet;
}

function reportDuplicate(input: SidecarRouteInput, name: string, svc: Service | undefined): void {
  const from = svc === undefined ? "virtual service" : "service";
  input.report?.("pilot_vservice_dup_domain", name, `duplicate domain from ${from}: ${name}`);
}

/**
 * The virtual host of one host of a group (a service's or a VirtualService's other host), with the
 * domains no earlier virtual host took; undefined when its name or every domain was taken.
 */
function groupVirtualHost(
  build: VirtualHostsBuild,
  g: VirtualHostGroup,
  hostname: string,
  svc: Service | undefined,
): route.VirtualHost | undefined {
  const { input, listenerPort, names: knownNames } = build;
  const name = domainName(hostname, g.port);
  if (knownNames.has(name)) {
    reportDuplicate(input, name, svc);
    return undefined;
  }
  knownNames.add(name);
  // Envoy sidecars ignore the port in Host matching; proxyless gRPC does not.
  const ignorePort = input.proxy.generator !== "grpc";
  let domains: readonly string[];
  let altHosts: readonly string[] = [];
  if (svc === undefined) domains = ignorePort ? [ipv6Compliant(hostname)] : [ipv6Compliant(hostname), name];
  else {
    const port = ignorePort && listenerPort !== 0 ? NO_PORT : g.port;
    ({ domains, altHosts } = sharedServiceDomains(build.memos, svc, port, input.proxy.dnsDomain));
  }
  const deduped = build.domainSet.dedupe(domains, altHosts);
  if (deduped.length !== domains.length) reportDuplicate(input, name, svc);
  if (deduped.length === 0) return undefined;
  const vhost = newVirtualHost();
  vhost.name = name;
  // Often a service's shared list: generated messages are never changed.
  vhost.domains = deduped as string[];
  vhost.routes = g.routes;
  vhost.includeRequestAttemptCount = build.includeRequestAttemptCount;
  const session = input.persistentSessions && svc ? statefulSessionConfig(svc.labels) : undefined;
  if (session) vhost.typedPerFilterConfig[STATEFUL_SESSION_FILTER] = statefulSessionPerRoute(session);
  return vhost;
}

/** The virtual hosts of a route name, before sorting and the catch-all (Istio's BuildSidecarOutboundVirtualHosts). */
export function buildSidecarVirtualHosts(input: SidecarRouteInput, listenerPort: number): route.VirtualHost[] {
  const { proxy, mesh } = input;
  const memos = input.memos ?? NO_MEMOS;
  const services = servicesForPort(memos, input.services, listenerPort);
  const ctx: RouteContext = {
    proxy,
    mesh,
    memos,
    listenerPort,
    gatewayNames: new Set([MESH_GATEWAY]),
    isTls: false,
    lookupService: (h) => services.get(h),
    hashPolicy: input.hashPolicy,
    persistentSessions: input.persistentSessions,
  };
  const groups = virtualHostGroups(input, listenerPort, services, ctx);

  const build: VirtualHostsBuild = {
    input,
    memos,
    listenerPort,
    includeRequestAttemptCount: routeProxyHeaders(mesh).includeRequestAttemptCount,
    names: new Set(),
    domainSet: new DomainSet(),
  };
  for (const g of groups) {
    for (const svc of g.services) {
      build.domainSet.addKnownFqdn(domainName(svc.hostname, g.port));
      build.domainSet.addKnownFqdn(svc.hostname);
    }
  }
  const byPort = new Map<number, route.VirtualHost[]>();
  for (const g of groups) {
    if (g.routes.length === 0) continue;
    let vhosts = byPort.get(g.port);
    if (!vhosts) {
      vhosts = [];
      byPort.set(g.port, vhosts);
    }
    for (const host of g.virtualServiceHosts) {
      const vhost = groupVirtualHost(build, g, host.toLowerCase(), undefined);
      if (vhost) vhosts.push(vhost);
    }
    for (const svc of g.services) {
      const vhost = groupVirtualHost(build, g, svc.hostname, svc);
      if (vhost) vhosts.push(vhost);
    }
  }
  if (listenerPort !== 0) return byPort.get(listenerPort) ?? [];
  // http_proxy: every port's hosts, but off port 80 only the `host:port` domains.
  const merged: route.VirtualHost[] = [];
  for (const [port, vhosts] of byPort) {
    for (const vh of vhosts) {
      if (port !== 80) vh.domains = vh.domains.filter((d) => d.includes(":"));
      if (vh.domains.length > 0) merged.push(vh);
    }
  }
  return merged;
}

// The virtual hosts answering each domain, per port list: each sniffed route name of the port looks
// its own up instead of scanning every virtual host's domains.
const VIRTUAL_HOSTS_BY_DOMAIN = weakTable<readonly route.VirtualHost[], Map<string, route.VirtualHost[]>>(
  "route/virtualHostsByDomain",
);

function byDomain(memos: Memos, vhosts: readonly route.VirtualHost[]): Map<string, route.VirtualHost[]> {
  const virtualHostsByDomain = memos.weak(VIRTUAL_HOSTS_BY_DOMAIN);
  let index = virtualHostsByDomain.get(vhosts);
  if (!index) {
    index = new Map();
    for (const vh of vhosts) {
      for (const domain of new Set(vh.domains)) {
        const answering = index.get(domain);
        if (answering) answering.push(vh);
        else index.set(domain, [vh]);
      }
    }
    virtualHostsByDomain.set(vhosts, index);
  }
  return index;
}

/** Istio's getVirtualHostsForSniffedServicePort: the one virtual host of `<fqdn>:<port>`, answering any Host. */
function sniffedVirtualHosts(
  memos: Memos,
  vhosts: readonly route.VirtualHost[],
  routeName: string,
): route.VirtualHost[] {
  const host = routeName.slice(0, routeName.lastIndexOf(":"));
  const index = byDomain(memos, vhosts);
  const matching = new Set([...(index.get(routeName) ?? []), ...(index.get(host) ?? [])]);
  // In the port's order, as a scan would find them.
  const out = matching.size <= 1 ? [...matching] : vhosts.filter((vh) => matching.has(vh));
  // A copy: the port's virtual hosts are shared by its route names.
  return out.length === 1 ? [{ ...out[0], domains: ["*"] }] : out;
}

export function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * The inline route configuration of virtualOutbound's plaintext HTTP chain under ALLOW_ANY_DYNAMIC_DNS
 * (Istio's buildAllowAnyDynamicDNSHTTPFilterChain): every host to AllowAnyDynamicDNSCluster.
 */
export function buildAllowAnyDynamicDnsRouteConfiguration(mesh: MeshConfig): route.RouteConfiguration {
  return create(route.RouteConfigurationSchema, {
    name: ALLOW_ANY_DYNAMIC_DNS,
    virtualHosts: [catchAllVirtualHost("ALLOW_ANY_DYNAMIC_DNS", routeProxyHeaders(mesh))],
    validateClusters: false,
    maxDirectResponseBodySizeBytes: MAX_DIRECT_RESPONSE_BODY_SIZE_BYTES,
    ignorePortInHostMatching: true,
  });
}

/** A sidecar's outbound RouteConfiguration; undefined for a route name sidecars never request. */
export function buildSidecarRouteConfiguration(input: SidecarRouteInput): route.RouteConfiguration | undefined {
  const parsed = parseSidecarRouteName(input.routeName);
  if (!parsed) return undefined;
  const build = () => buildSidecarVirtualHosts(input, parsed.listenerPort).sort(byName);
  const portVirtualHosts = input.portVirtualHosts?.(parsed.listenerPort, build) ?? build();
  const memos = input.memos ?? NO_MEMOS;
  const vhosts = parsed.sniffed ? sniffedVirtualHosts(memos, portVirtualHosts, input.routeName) : [...portVirtualHosts];
  if (!parsed.sniffed) {
    const policy = input.outboundTrafficPolicy ?? input.mesh.outboundTrafficPolicy ?? {};
    vhosts.push(
      catchAllVirtualHost(policy.mode ?? "ALLOW_ANY", {
        ...routeProxyHeaders(input.mesh),
        egressProxy: input.outboundTrafficPolicy?.egressProxy,
        memos,
      }),
    );
  }
  const config = newRouteConfiguration();
  config.name = input.routeName;
  config.virtualHosts = vhosts;
  config.validateClusters = false;
  config.maxDirectResponseBodySizeBytes = MAX_DIRECT_RESPONSE_BODY_SIZE_BYTES;
  config.ignorePortInHostMatching = true;
  return config;
}
