// Virtual host names and domains (Istio httproute.go generateVirtualHostDomains,
// GenerateAltVirtualHosts, dedupeDomains, buildCatchAllVirtualHost). A service is reachable by its
// FQDN, the FQDN with a trailing dot, the short names its Kubernetes DNS search path allows from the
// proxy's namespace, and its VIPs; `:port` forms only where ports are not ignored in host matching.

import { isIP } from "node:net";
import { create } from "@bufbuild/protobuf";
import { route } from "../../api/index.ts";
import type { Destination } from "../../config/index.ts";
import { type Memos, NO_MEMOS } from "../../util/index.ts";
import { ALLOW_ANY_DYNAMIC_DNS_CLUSTER } from "../cluster/names.ts";
import { ZERO_DURATION } from "../duration.ts";
import { destinationCluster } from "./destination.ts";
import { newRoute, newRouteAction, newRouteMatch, newVirtualHost } from "./message.ts";
import type { Service } from "./types.ts";

/** No `:port` suffix on domains (Istio's portNoAppendPortSuffix). */
export const NO_PORT = 0;

export const PASSTHROUGH_CLUSTER = "PassthroughCluster";
export { ALLOW_ANY_DYNAMIC_DNS_CLUSTER };
/** Catch-all virtual host and route names per outbound traffic policy. */
export const ALLOW_ANY = "allow_any";
export const BLOCK_ALL = "block_all";
export const ALLOW_ANY_DYNAMIC_DNS = "allow_any_dynamic_dns";

/** IPv6 addresses in brackets, as in a Host header. */
export function ipv6Compliant(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** `host:port` as Go's net.JoinHostPort (IPv6 bracketed). */
export function domainName(host: string, port: number): string {
  return `${ipv6Compliant(host)}:${port}`;
}

function appendDomainPort(domains: string[], domain: string, port: number): void {
  domains.push(ipv6Compliant(domain));
  if (port !== NO_PORT) domains.push(domainName(domain, port));
}

/** Kubernetes short forms of `hostname` when proxy and service share `.svc.<suffix>` (Istio's generateAltVirtualHostsForKubernetesService). */
function kubernetesAltHosts(hostname: string, port: number, proxyDomain: string): string[] {
  const proxyNamespace = proxyDomain.slice(0, proxyDomain.indexOf(".svc."));
  const svcAt = hostname.indexOf(".svc.");
  if (svcAt <= 0) return [];
  const dot = hostname.indexOf(".");
  if (dot + 1 >= hostname.length || dot + 1 > svcAt) return [];
  const name = hostname.slice(0, dot);
  const nameNs = hostname.slice(0, svcAt);
  const forms =
    hostname.slice(dot + 1, svcAt) === proxyNamespace ? [name, `${nameNs}.svc`, nameNs] : [nameNs, `${nameNs}.svc`];
  return forms.flatMap((f) => (port === NO_PORT ? [f] : [f, domainName(f, port)]));
}

/**
 * Istio's GenerateAltVirtualHosts: every other Host a client may send for `hostname` from a proxy in
 * DNS domain `proxyDomain` (the FQDN itself excluded).
 */
export function altVirtualHosts(hostname: string, port: number, proxyDomain: string): string[] {
  const out: string[] = [];
  // The absolute FQDN (PILOT_ENABLE_ABSOLUTE_FQDN_VHOST_DOMAIN, default on).
  if (isIP(hostname) === 0) out.push(`${hostname}.`);
  if (port !== NO_PORT) out.push(domainName(`${hostname}.`, port));

  if (proxyDomain.includes(".svc.")) {
    const svcSuffix = proxyDomain.slice(proxyDomain.indexOf(".svc."));
    // Only Kubernetes-style names sharing the proxy's cluster suffix are safe to shorten.
    if (hostname.endsWith(svcSuffix)) out.push(...kubernetesAltHosts(hostname, port, proxyDomain));
    return out;
  }

  const hostParts = hostname.split(".").reverse();
  const domainParts = proxyDomain.split(".").reverse();
  let shared = 0;
  while (shared < Math.min(hostParts.length, domainParts.length) && hostParts[shared] === domainParts[shared]) shared++;
  if (shared === 0) return out;
  const unique = hostParts.slice(shared).reverse();
  const sharedParts = hostParts.slice(0, shared).reverse();
  const uniqueHost = unique.join(".");
  appendDomainPort(out, uniqueHost, port);
  if (unique.length === 2) appendDomainPort(out, `${uniqueHost}.${sharedParts[0]}`, port);
  return out;
}

/** The service's addresses a proxy may dial (VIPs; none for 0.0.0.0). */
function serviceAddresses(service: Service): string[] {
  const all = service.addresses.length > 0 ? service.addresses : [service.defaultAddress];
  return all.filter((a) => a !== "" && a !== "0.0.0.0");
}

/**
 * Istio's generateVirtualHostDomains: the domains of a service's virtual host, and the alternate
 * (expanded) names among them. `port` is NO_PORT where the proxy ignores ports in host matching.
 */
export function serviceDomains(
  service: Service,
  port: number,
  proxyDomain: string,
): { domains: string[]; altHosts: string[] } {
  const domains: string[] = [];
  const alt = altVirtualHosts(service.hostname, port, proxyDomain);
  appendDomainPort(domains, service.hostname, port);
  domains.push(...alt);
  if (service.resolution === "Passthrough" && service.registry === "Kubernetes") {
    // A headless service's pods are also addressed as <pod>.<service>...
    domains.push(...domains.map((d) => `*.${d}`));
  }
  for (const address of serviceAddresses(service)) appendDomainPort(domains, address, port);
  return { domains, altHosts: alt };
}

/** Tracks domains already used in one route configuration: later virtual hosts lose duplicates (Istio's dedupeDomains). */
export class DomainSet {
  private readonly used = new Set<string>();
  private readonly knownFqdns = new Set<string>();

  /** A name a service of the configuration is known by: an expanded short name equal to it is dropped. */
  addKnownFqdn(name: string): void {
    this.knownFqdns.add(name);
  }

  /** The domains no earlier virtual host took: `domains` itself (shared, never change it) when none was. */
  dedupe(domains: readonly string[], altHosts: readonly string[]): readonly string[] {
    let out: string[] | undefined;
    for (let i = 0; i < domains.length; i++) {
      const d = domains[i];
      const key = d.toLowerCase();
      if (this.used.has(key) || (this.knownFqdns.has(d) && altHosts.includes(d))) {
        // The first domain dropped: the ones before it are kept.
        out ??= domains.slice(0, i);
        continue;
      }
      out?.push(d);
      this.used.add(key);
    }
    return out ?? domains;
  }
}

export type OutboundTrafficMode = "ALLOW_ANY" | "REGISTRY_ONLY" | "ALLOW_ANY_DYNAMIC_DNS";

function catchAllRoute(name: string, action: route.Route["action"]): route.Route {
  const out = newRoute();
  out.name = name;
  out.match = newRouteMatch();
  out.match.pathSpecifier = { case: "prefix", value: "/" };
  out.action = action;
  return out;
}

function catchAll(name: string, action: route.Route["action"], includeRequestAttemptCount: boolean): route.VirtualHost {
  const vhost = newVirtualHost();
  vhost.name = name;
  vhost.domains.push("*");
  vhost.routes.push(catchAllRoute(name, action));
  vhost.includeRequestAttemptCount = includeRequestAttemptCount;
  return vhost;
}

/**
 * The last virtual host of a sidecar's port route configuration (Istio's buildCatchAllVirtualHost):
 * unknown hosts pass through (ALLOW_ANY, to the egress proxy when one is set), go to the dynamic DNS
 * cluster, or get a 502 (REGISTRY_ONLY).
 */
export function catchAllVirtualHost(
  mode: OutboundTrafficMode,
  options: {
    includeRequestAttemptCount: boolean;
    appendXForwardedHost: boolean;
    egressProxy?: Destination;
    memos?: Memos;
  },
): route.VirtualHost {
  const { includeRequestAttemptCount } = options;
  const forward = (name: string, cluster: string) => {
    const action = newRouteAction();
    action.clusterSpecifier = { case: "cluster", value: cluster };
    action.timeout = ZERO_DURATION;
    action.maxGrpcTimeout = ZERO_DURATION;
    action.appendXForwardedHost = options.appendXForwardedHost;
    return catchAll(name, { case: "route", value: action }, includeRequestAttemptCount);
  };
  if (mode === "ALLOW_ANY_DYNAMIC_DNS") return forward(ALLOW_ANY_DYNAMIC_DNS, ALLOW_ANY_DYNAMIC_DNS_CLUSTER);
  if (mode === "ALLOW_ANY") {
    const cluster = options.egressProxy
      ? destinationCluster(options.memos ?? NO_MEMOS, options.egressProxy, undefined, 0)
      : PASSTHROUGH_CLUSTER;
    return forward(ALLOW_ANY, cluster);
  }
  const blocked = create(route.DirectResponseActionSchema, { status: 502 });
  return catchAll(BLOCK_ALL, { case: "directResponse", value: blocked }, includeRequestAttemptCount);
}
