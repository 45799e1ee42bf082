// What one proxy sees (Istio's SidecarScope): the services, VirtualServices and DestinationRules
// imported by its Sidecar's egress listeners (or by the default `*\/*` listener), its ingress
// listeners and its outbound traffic policy. Built once per push per Sidecar and config namespace.
import { keyString, type MeshConfig, type ObjectKey } from "../config/index.ts";
import type {
  ConnectionPool,
  Sidecar,
  SidecarIngress,
  SidecarOutboundTrafficPolicy,
  VirtualService,
} from "../config/types/index.ts";
import type { Service } from "../registry/index.ts";
import { nameOf, namespaceOf } from "./config-meta.ts";
import { type DestinationRuleIndex, destinationRuleForProxy } from "./destination-rule-index.ts";
import type { ConsolidatedDestinationRule } from "./destination-rule-merge.ts";
import { hostsMatch, isWildcard, MESH_GATEWAY } from "./host.ts";
import { PUSH_KINDS, SERVICE_KINDS } from "./push-kinds.ts";
import type { ServiceIndex } from "./service-index.ts";
import { buildEgressListener, type EgressListener, portToMatch, withOnlyPort } from "./sidecar-egress.ts";
import type { VirtualServiceIndex } from "./virtual-service-index.ts";

export const DEFAULT_SIDECAR_NAME = "default-sidecar";

/** Kinds that apply to every proxy when in the root namespace, and to a namespace's proxies when there. */
const NAMESPACE_WIDE_KINDS: ReadonlySet<string> = new Set([
  PUSH_KINDS.envoyFilter,
  PUSH_KINDS.authorizationPolicy,
  PUSH_KINDS.requestAuthentication,
  PUSH_KINDS.wasmPlugin,
  PUSH_KINDS.trafficExtension,
  PUSH_KINDS.telemetry,
]);
/** Kinds whose objects a scope records when it uses them. */
const SCOPED_KINDS: ReadonlySet<string> = new Set([
  PUSH_KINDS.virtualService,
  PUSH_KINDS.destinationRule,
  PUSH_KINDS.sidecar,
  SERVICE_KINDS.Kubernetes,
  SERVICE_KINDS.External,
]);

/** The push's indexes a scope is computed from. */
export interface ScopeSources {
  services: ServiceIndex;
  virtualServices: VirtualServiceIndex;
  destinationRules: DestinationRuleIndex;
  mesh: MeshConfig;
}

export type TrafficDirection = Parameters<typeof destinationRuleForProxy>[1];

export interface OutboundTrafficPolicy {
  /** The Sidecar's mode, else the mesh's (which may also be ALLOW_ANY_DYNAMIC_DNS). */
  mode: "ALLOW_ANY" | "REGISTRY_ONLY" | "ALLOW_ANY_DYNAMIC_DNS";
  egressProxy?: SidecarOutboundTrafficPolicy["egressProxy"];
}

export class SidecarScope {
  /** The Sidecar's name, or "default-sidecar". */
  readonly name: string;
  /** The config namespace it was computed for (a root-namespace Sidecar applies to many). */
  readonly namespace: string;
  /** The Sidecar resource; undefined for the default scope. */
  readonly sidecar: Sidecar | undefined;
  readonly egressListeners: readonly EgressListener[];
  /** Union of the listeners' services, one per hostname (CDS builds from these). */
  readonly services: readonly Service[];
  readonly outboundTrafficPolicy: OutboundTrafficPolicy;
  private readonly byHostname = new Map<string, Service>();
  private readonly destinationRulesByHost = new Map<string, readonly ConsolidatedDestinationRule[]>();
  private readonly rootNamespace: string;
  /** Configs this scope was computed from (keyString), for dependsOn. */
  private readonly dependencies = new Set<string>();
  /** Namespaces whose PeerAuthentications matter: root, config, and every imported service's. */
  private readonly peerAuthenticationNamespaces: ReadonlySet<string>;

  constructor(sources: ScopeSources, sidecar: Sidecar | undefined, configNamespace: string, forGateway = false) {
    this.name = sidecar ? nameOf(sidecar) : DEFAULT_SIDECAR_NAME;
    this.namespace = configNamespace;
    this.sidecar = sidecar;

    const services: Service[] = [];
    const add = (service: Service) => this.appendService(services, service);
    if (forGateway) {
      // Gateways see every service visible to their namespace, and mesh VirtualServices for waypoints.
      for (const service of sources.services.visibleTo(configNamespace)) add(service);
      const virtualServices = sources.virtualServices.forGateway(configNamespace, MESH_GATEWAY);
      this.egressListeners = [{ services: [], virtualServices, virtualServiceByHostname: new Map() }];
    } else {
      const egress = sidecar?.spec?.egress?.length ? sidecar.spec.egress : [undefined];
      this.egressListeners = egress.map((e) =>
        buildEgressListener(e, configNamespace, sources.services, sources.virtualServices),
      );
      for (const listener of this.egressListeners) {
        // Services named by hosts first, so a destination found through a VirtualService never replaces them.
        for (const service of listener.services) add(service);
        for (const vs of listener.virtualServices) {
          for (const [host, ports] of virtualServiceDestinations(vs, configNamespace)) {
            const chosen = pickServiceNamespace(sources.services, host, configNamespace);
            const port = portToMatch(listener.egress);
            const narrowed = chosen && (port ? withOnlyPort(chosen, port) : withDestinationPorts(chosen, ports));
            if (narrowed) add(narrowed);
          }
        }
      }
    }
    this.services = services;
    for (const service of services) {
      const rules = sources.destinationRules.forService(configNamespace, service);
      if (rules.length > 0) this.destinationRulesByHost.set(service.hostname, rules);
    }
    this.rootNamespace = sources.mesh.rootNamespace ?? "istio-system";
    this.peerAuthenticationNamespaces = new Set([
      this.rootNamespace,
      configNamespace,
      ...services.map((s) => s.namespace),
    ]);
    this.recordDependencies(sources);
    this.outboundTrafficPolicy = outboundTrafficPolicy(sidecar, sources.mesh);
  }

  /** The ingress listeners the Sidecar declares (none: inbound follows the workload's service ports). */
  get ingressListeners(): readonly SidecarIngress[] {
    return this.sidecar?.spec?.ingress ?? [];
  }

  /** The service this scope uses for `hostname`. */
  service(hostname: string): Service | undefined {
    return this.byHostname.get(hostname);
  }

  /** The services covered by `hostname`, which may be a wildcard. */
  servicesForHostname(hostname: string): Service[] {
    if (!isWildcard(hostname)) {
      const service = this.byHostname.get(hostname);
      return service ? [service] : [];
    }
    return this.services.filter((s) => hostsMatch(hostname, s.hostname));
  }

  /** Every consolidated DestinationRule for the service `hostname` in this scope. */
  destinationRules(hostname: string): readonly ConsolidatedDestinationRule[] {
    return this.destinationRulesByHost.get(hostname) ?? [];
  }

  /**
   * The DestinationRule for traffic of a proxy with `labels` to `hostname`: outbound, a rule of this
   * scope's namespace whose workloadSelector matches wins; else the rule without selector.
   */
  destinationRule(
    direction: TrafficDirection,
    labels: Readonly<Record<string, string>>,
    hostname: string,
  ): ConsolidatedDestinationRule | undefined {
    return destinationRuleForProxy(this.destinationRules(hostname), direction, this.namespace, labels);
  }

  /** The egress listener serving RDS for `port` (0 with `bind` for a unix socket), else the catch-all. */
  egressListenerFor(port: number, bind: string): EgressListener | undefined {
    for (const listener of this.egressListeners) {
      const number = listener.egress?.port?.number;
      if (!number) return listener;
      if (number === port && (port !== 0 || listener.egress?.bind === bind)) return listener;
    }
    return undefined;
  }

  /** Inbound connection pool for `port`: the ingress listener's, else the Sidecar's. */
  inboundConnectionPool(port: number): ConnectionPool | undefined {
    const listener = this.ingressListeners.find((l) => l.port.number === port && l.connectionPool);
    return listener?.connectionPool ?? this.sidecar?.spec?.inboundConnectionPool;
  }

  /**
   * Whether a change to `key` can change config built from this scope (Istio's DependsOnConfig).
   * Policies of the root or this namespace always can; VirtualServices, DestinationRules,
   * Sidecars, services and PeerAuthentications only when this scope used them; other kinds always.
   * A service is known by its object's key and by the ServiceEntry-kind key naming its hostname.
   * A new config may be picked up by the next push's scope only: check that scope too.
   */
  dependsOn(key: ObjectKey): boolean {
    if (NAMESPACE_WIDE_KINDS.has(key.kind))
      return key.namespace === this.rootNamespace || key.namespace === this.namespace;
    if (key.kind === PUSH_KINDS.peerAuthentication) return this.peerAuthenticationNamespaces.has(key.namespace);
    if (!SCOPED_KINDS.has(key.kind)) return true;
    return this.dependencies.has(keyString(key));
  }

  private recordDependencies(sources: ScopeSources): void {
    const add = (kind: string, namespace: string, name: string) =>
      this.dependencies.add(keyString({ kind, namespace, name }));
    if (this.sidecar) add(PUSH_KINDS.sidecar, namespaceOf(this.sidecar), nameOf(this.sidecar));
    for (const listener of this.egressListeners) {
      for (const vs of listener.virtualServices) {
        add(PUSH_KINDS.virtualService, namespaceOf(vs), nameOf(vs));
        for (const delegate of sources.virtualServices.delegatesOf(vs)) {
          const [namespace, name] = delegate.split("/");
          add(PUSH_KINDS.virtualService, namespace, name);
        }
      }
    }
    for (const service of this.services) {
      add(SERVICE_KINDS[service.registry], service.namespace, service.objectName);
      // Pushes name a service by a ServiceEntry-kind key holding its hostname (Istio's ObjectKey for services).
      add(SERVICE_KINDS.External, service.namespace, service.hostname);
    }
    for (const rules of this.destinationRulesByHost.values()) {
      for (const rule of rules) {
        for (const from of rule.from) {
          const [namespace, name] = from.split("/");
          add(PUSH_KINDS.destinationRule, namespace, name);
        }
      }
    }
  }

  /**
   * Adds a service, one per hostname: a Kubernetes service is never replaced by another registry's
   * and replaces theirs; a same-namespace, same-kind service adds its ports; others are ignored.
   */
  private appendService(services: Service[], service: Service): void {
    const existing = this.byHostname.get(service.hostname);
    if (!existing) {
      services.push(service);
      this.byHostname.set(service.hostname, service);
      return;
    }
    if (existing === service) return;
    if (existing.registry === "Kubernetes" && service.registry !== "Kubernetes") return;
    let replacement: Service | undefined;
    if (existing.registry !== "Kubernetes" && service.registry === "Kubernetes") replacement = service;
    else if (!samePorts(existing, service) && canMerge(existing, service)) {
      const known = new Set(existing.ports.map((p) => p.port));
      replacement = { ...existing, ports: [...existing.ports, ...service.ports.filter((p) => !known.has(p.port))] };
    }
    if (!replacement) return;
    services[services.indexOf(existing)] = replacement;
    this.byHostname.set(service.hostname, replacement);
  }
}

/**
 * The Sidecar's policy, else the mesh's, else ALLOW_ANY. A policy without mode is REGISTRY_ONLY
 * (the zero value of Istio's enum).
 */
function outboundTrafficPolicy(sidecar: Sidecar | undefined, mesh: MeshConfig): OutboundTrafficPolicy {
  const own = sidecar?.spec?.outboundTrafficPolicy;
  if (own) return { mode: own.mode ?? "REGISTRY_ONLY", ...(own.egressProxy && { egressProxy: own.egressProxy }) };
  if (mesh.outboundTrafficPolicy) return { mode: mesh.outboundTrafficPolicy.mode ?? "REGISTRY_ONLY" };
  return { mode: "ALLOW_ANY" };
}

/**
 * Hosts a VirtualService routes to, with the ports it names (0: a destination without port), for a
 * proxy in `configNamespace`: http routes whose matches all name another sourceNamespace are skipped.
 */
function virtualServiceDestinations(vs: VirtualService, configNamespace: string): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  const add = (host: string, port: number | undefined) => out.set(host, (out.get(host) ?? new Set()).add(port ?? 0));
  for (const route of vs.spec?.http ?? []) {
    const sources = (route.match ?? []).map((m) => m.sourceNamespace).filter((ns) => ns);
    if (sources.length > 0 && !sources.includes(configNamespace)) continue;
    for (const r of route.route ?? []) add(r.destination.host, r.destination.port?.number);
    if (route.mirror) add(route.mirror.host, route.mirror.port?.number);
    for (const m of route.mirrors ?? []) add(m.destination.host, m.destination.port?.number);
  }
  for (const route of [...(vs.spec?.tcp ?? []), ...(vs.spec?.tls ?? [])]) {
    for (const r of route.route ?? []) add(r.destination.host, r.destination.port?.number);
  }
  return out;
}

/**
 * The service for a VirtualService destination: the config namespace's, else a visible Kubernetes
 * service, else the oldest visible one (Istio's pickBestVisibleNamespace).
 */
function pickServiceNamespace(services: ServiceIndex, host: string, configNamespace: string): Service | undefined {
  const byNamespace = services.byNamespace(host);
  const own = byNamespace.get(configNamespace);
  if (own) return own;
  let best: Service | undefined;
  for (const service of byNamespace.values()) {
    if (!services.isVisible(service, configNamespace)) continue;
    if (service.registry === "Kubernetes") return service;
    if (!best || (Date.parse(service.creationTime) || 0) < (Date.parse(best.creationTime) || 0)) best = service;
  }
  return best;
}

/** The service narrowed to the ports a VirtualService routes to (all when one destination names none). */
function withDestinationPorts(service: Service, ports: ReadonlySet<number>): Service | undefined {
  if (ports.size === 0 || ports.has(0)) return service;
  const found = service.ports.filter((p) => ports.has(p.port));
  if (found.length === service.ports.length) return service;
  return found.length > 0 ? { ...service, ports: found } : undefined;
}

function samePorts(a: Service, b: Service): boolean {
  return (
    a.ports.length === b.ports.length &&
    a.ports.every(
      (p, i) => p.port === b.ports[i].port && p.name === b.ports[i].name && p.protocol === b.ports[i].protocol,
    )
  );
}

function canMerge(a: Service, b: Service): boolean {
  return (
    a.namespace === b.namespace &&
    a.resolution === b.resolution &&
    a.registry === b.registry &&
    JSON.stringify(a.labels) === JSON.stringify(b.labels) &&
    JSON.stringify(a.selector) === JSON.stringify(b.selector) &&
    JSON.stringify([...a.exportTo].sort()) === JSON.stringify([...b.exportTo].sort())
  );
}
