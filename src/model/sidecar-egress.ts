// One egress listener of a Sidecar: its `hosts` (`namespace/dnsName`) read as Istio reads them,
// and the services and VirtualServices they import (Istio's IstioEgressListenerWrapper).
// - the namespace is a name, `.` (the proxy's config namespace) or `*` (any namespace);
// - the dnsName is a host, a wildcard (`*.example.com`) or `*`;
// - a namespace prefixed `~` excludes the hosts instead (`~/*` or `~ns/h`: nothing, or not h).
// A service is imported by an entry of its own namespace or of `*`; when the listener has a port,
// only that port of the service is kept.
import { parseProtocol } from "../config/index.ts";
import type { SidecarEgress, VirtualService } from "../config/types/index.ts";
import type { Service } from "../registry/index.ts";
import { namespaceOf } from "./config-meta.ts";
import { hostSubsetOf, hostsMatch, isWildcard, MESH_GATEWAY, mostSpecificHostMatch } from "./host.ts";
import type { ServiceIndex } from "./service-index.ts";
import { usesGatewaySemantics, type VirtualServiceIndex } from "./virtual-service-index.ts";

const ANY_NAMESPACE = "*";

/** The hosts one namespace entry of a listener imports or excludes. */
interface ImportedHosts {
  exact: Set<string>;
  all: string[];
  excluded: string[];
}

export interface EgressListener {
  /** The Sidecar's egress entry; undefined for the default listener importing `*\/*`. */
  readonly egress?: SidecarEgress;
  /** Imported services, at most one per hostname (see pickPerHostname). */
  readonly services: readonly Service[];
  /** Imported VirtualServices bound to the mesh, in precedence order. */
  readonly virtualServices: readonly VirtualService[];
  /**
   * For each imported service hostname, the VirtualService whose host matches it most specifically
   * (exact, else the longest wildcard; the first in precedence order on a tie).
   */
  readonly virtualServiceByHostname: ReadonlyMap<string, VirtualService>;
}

export function buildEgressListener(
  egress: SidecarEgress | undefined,
  configNamespace: string,
  services: ServiceIndex,
  virtualServices: VirtualServiceIndex,
): EgressListener {
  const hosts = classifyHosts(egress?.hosts ?? ["*/*"], configNamespace);
  const listenerPort = portToMatch(egress);
  const imported: Service[] = [];
  for (const service of services.visibleTo(configNamespace)) {
    const own = hosts.get(service.namespace);
    const any = hosts.get(ANY_NAMESPACE);
    if (own?.excluded.some((h) => hostSubsetOf(service.hostname, h))) continue;
    if (any?.excluded.some((h) => hostSubsetOf(service.hostname, h))) continue;
    const imports = (own && importsService(own, service.hostname)) || (any && importsService(any, service.hostname));
    if (!imports) continue;
    const narrowed = listenerPort === undefined ? service : withOnlyPort(service, listenerPort);
    if (narrowed) imported.push(narrowed);
  }
  const selectedServices = pickPerHostname(imported, configNamespace);
  const selectedVirtualServices = selectVirtualServices(
    virtualServices.forGateway(configNamespace, MESH_GATEWAY),
    hosts,
  );
  return {
    egress,
    services: selectedServices,
    virtualServices: selectedVirtualServices,
    virtualServiceByHostname: mostSpecificVirtualServices(selectedVirtualServices, selectedServices),
  };
}

/** Istio's computeWildcardHostVirtualServiceIndex: the best VirtualService per service hostname. */
function mostSpecificVirtualServices(
  virtualServices: readonly VirtualService[],
  services: readonly Service[],
): Map<string, VirtualService> {
  const byHost = new Map<string, VirtualService>();
  for (const vs of virtualServices) {
    for (const host of vs.spec?.hosts ?? []) if (!byHost.has(host)) byHost.set(host, vs);
  }
  const out = new Map<string, VirtualService>();
  for (const service of services) {
    const host = mostSpecificHostMatch(service.hostname, byHost.keys());
    const vs = host === undefined ? undefined : byHost.get(host);
    if (vs) out.set(service.hostname, vs);
  }
  return out;
}

function classifyHosts(hosts: readonly string[], configNamespace: string): Map<string, ImportedHosts> {
  const byNamespace = new Map<string, ImportedHosts>();
  for (const entry of hosts) {
    const parts = entry.split("/");
    if (parts.length !== 2) continue;
    let [namespace, host] = parts;
    const excluded = namespace.startsWith("~");
    if (excluded) namespace = namespace.slice(1) || ANY_NAMESPACE;
    if (namespace === ".") namespace = configNamespace;
    const imported = byNamespace.get(namespace) ?? { exact: new Set<string>(), all: [], excluded: [] };
    byNamespace.set(namespace, imported);
    if (excluded) imported.excluded.push(host);
    else {
      if (!isWildcard(host)) imported.exact.add(host);
      imported.all.push(host);
    }
  }
  return byNamespace;
}

function importsService(imported: ImportedHosts, hostname: string): boolean {
  if (imported.exact.has(hostname)) return true;
  return imported.all.some((h) => (isWildcard(h) || isWildcard(hostname)) && hostSubsetOf(hostname, h));
}

/** A VirtualService host is imported: Gateway API routes one way (host within import), others either way. */
function importsVirtualServiceHost(imported: ImportedHosts, host: string, gatewaySemantics: boolean): boolean {
  if (imported.exact.has(host)) return true;
  return imported.all.some(
    (h) => (isWildcard(h) || isWildcard(host)) && (gatewaySemantics ? hostSubsetOf(host, h) : hostsMatch(host, h)),
  );
}

function selectVirtualServices(
  candidates: readonly VirtualService[],
  hosts: ReadonlyMap<string, ImportedHosts>,
): VirtualService[] {
  const any = hosts.get(ANY_NAMESPACE);
  const imports = (vs: VirtualService, imported: ImportedHosts | undefined) => {
    if (!imported) return false;
    const own = hosts.get(namespaceOf(vs));
    return (vs.spec?.hosts ?? []).some(
      (h) =>
        importsVirtualServiceHost(imported, h, usesGatewaySemantics(vs)) &&
        !own?.excluded.some((x) => hostSubsetOf(h, x)) &&
        !any?.excluded.some((x) => hostSubsetOf(h, x)),
    );
  };
  return candidates.filter((vs) => imports(vs, hosts.get(namespaceOf(vs))) || imports(vs, any));
}

/** The listener's port when services must declare it (not for HTTP_PROXY listeners). */
export function portToMatch(egress: SidecarEgress | undefined): number | undefined {
  const number = egress?.port?.number ?? 0;
  if (number === 0 || parseProtocol(egress?.port?.protocol ?? "") === "HTTP_PROXY") return undefined;
  return number;
}

/** The service with only `port`, or undefined when it has no such port. */
export function withOnlyPort(service: Service, port: number): Service | undefined {
  const match = service.ports.find((p) => p.port === port);
  if (!match) return undefined;
  return service.ports.length === 1 ? service : { ...service, ports: [match] };
}

/**
 * One service per hostname: the one in the config namespace, else a Kubernetes service over a
 * ServiceEntry, else the first seen (Istio's unified sidecar scoping).
 */
function pickPerHostname(services: readonly Service[], configNamespace: string): Service[] {
  const chosen = new Map<string, Service>();
  for (const service of services) {
    const existing = chosen.get(service.hostname);
    if (
      !existing ||
      service.namespace === configNamespace ||
      (existing.registry !== "Kubernetes" &&
        service.registry === "Kubernetes" &&
        existing.namespace !== configNamespace)
    ) {
      chosen.set(service.hostname, service);
    }
  }
  return services.filter((s) => chosen.get(s.hostname)?.namespace === s.namespace);
}
