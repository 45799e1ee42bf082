// A proxy's listeners (Istio's configgen BuildListeners). Sidecars get their Sidecar scope's outbound
// listeners and the inbound listeners of their Sidecar ingress or service ports; routers get one
// listener per merged Gateway port. Lists proxies share are cached.

import { isIPv4, isIPv6 } from "node:net";
import { ipString } from "../ambient/index.ts";
import {
  accesslog,
  encodeMessage,
  hcm,
  listener,
  type PackedMessage,
  packed,
  TypeUrl,
  unpacked,
} from "../api/index.ts";
import type { MeshConfig } from "../config/index.ts";
import type {
  AuthorizationPolicy,
  DestinationRuleSpec,
  RequestAuthentication,
  TrafficExtension,
} from "../config/types/index.ts";
import { labelsContain } from "../krt/index.ts";
import type { MeshPush, ProxyNode, PushSnapshot, SidecarScope } from "../model/index.ts";
import { groupPolicies, type PoliciesByAction, selectPolicies, trustDomainBundle } from "../networking/authz/index.ts";
import { outboundClusterName } from "../networking/cluster/index.ts";
import {
  type PatchSet,
  patchGeneratedListeners,
  patchSetFor,
  patchWaypointDefaultRoute,
  patchWaypointListeners,
} from "../networking/envoyfilter/index.ts";
import type { ListenerClass } from "../networking/httpfilter/index.ts";
import {
  buildGatewayListeners,
  buildSidecarInboundListeners,
  buildSidecarOutboundListeners,
  buildWaypointListeners,
  type InboundPolicies,
  type InboundPort,
  interceptionMode,
  type ListenerEnv,
  reportInboundConflicts,
} from "../networking/listener/index.ts";
import { buildProxyTelemetry, type ProxyTelemetry } from "../networking/telemetry/index.ts";
import { type EndpointLookup, type Service, type ServiceEndpoint, UNSPECIFIED_IP } from "../registry/index.ts";
import { hostsMatch, type Memos, weakTable } from "../util/index.ts";
import { resourceTable, type XdsCache } from "./cache/xds-cache.ts";
import { hashPolicyFor, topLevelHashPolicy } from "./hash-policy.ts";
import { sidecarInboundTargets } from "./inbound-targets.ts";
import { listenAddresses } from "./proxy-view.ts";

function trustDomains(snap: PushSnapshot): readonly string[] {
  return trustDomainBundle(snap.mesh.trustDomain ?? "cluster.local", snap.mesh.trustDomainAliases ?? []);
}

/** The policy objects attached to the proxy's workload (selected by its namespace and labels). */
interface AttachedPolicies {
  authorizationPolicies: readonly AuthorizationPolicy[];
  requestAuthentications: readonly RequestAuthentication[];
  extensions: readonly TrafficExtension[];
}

function attachedPolicies(snap: PushSnapshot, proxy: ProxyNode): AttachedPolicies {
  return {
    authorizationPolicies: snap.authorizationPoliciesFor(proxy),
    requestAuthentications: snap.requestAuthenticationsFor(proxy),
    extensions: snap.trafficExtensionsFor(proxy),
  };
}

/** The authentication, authorization and metrics policies the proxy's HTTP filters enforce. */
function proxyPolicies(
  memos: Memos,
  snap: PushSnapshot,
  proxy: ProxyNode,
  telemetry: ProxyTelemetry,
  attached: AttachedPolicies = attachedPolicies(snap, proxy),
): InboundPolicies {
  const workload = { namespace: proxy.configNamespace, labels: proxy.labels };
  const authz = selectPolicies(attached.authorizationPolicies, workload, snap.rootNamespace);
  return policiesOf(memos, snap, telemetry, authz, attached, false);
}

/**
 * The policies a waypoint enforces for one of its services, or (none) on its direct pod chains: those
 * targeting them (Istio's NewBuilderForService), peers known by the filter state HBONE set.
 */
function waypointPolicies(
  memos: Memos,
  snap: PushSnapshot,
  proxy: ProxyNode,
  telemetry: ProxyTelemetry,
  extensions: readonly TrafficExtension[],
  service: Service | undefined,
): InboundPolicies {
  const authz = groupPolicies(snap.waypointAuthorizationPolicies(proxy, service));
  const requestAuthentications = snap.waypointRequestAuthentications(proxy, service);
  return policiesOf(memos, snap, telemetry, authz, { requestAuthentications, extensions }, true);
}

function policiesOf(
  memos: Memos,
  snap: PushSnapshot,
  telemetry: ProxyTelemetry,
  authz: PoliciesByAction,
  attached: Pick<AttachedPolicies, "requestAuthentications" | "extensions">,
  useFilterState: boolean,
): InboundPolicies {
  return {
    authz,
    authzOptions: { trustDomains: trustDomains(snap), useFilterState },
    customAuthz: { extensionProviders: snap.mesh.extensionProviders ?? [], services: snap.services.all },
    jwtRules: attached.requestAuthentications.flatMap((ra) => ra.spec?.jwtRules ?? []),
    // Istio's LookupCluster: a JWKS host the registry serves on that port is fetched through its cluster.
    jwksCluster: (host, port) =>
      snap.services.all.some((s) => s.hostname === host && s.ports.some((p) => p.port === port))
        ? outboundClusterName(memos, port, "", host)
        : undefined,
    prometheusStats: prometheusStats(telemetry),
    telemetry,
    extensions: attached.extensions,
  };
}

/** What every listener build of the proxy reads: the proxy, the mesh and push features, its telemetry and extensions. */
function listenerEnv(
  memos: Memos,
  snap: PushSnapshot,
  proxy: ProxyNode,
  telemetry: ProxyTelemetry,
  extensions: readonly TrafficExtension[],
): ListenerEnv {
  return {
    proxy,
    mesh: snap.mesh,
    telemetry,
    extensions,
    persistentSessions: snap.persistentSessions,
    protocolFilters: snap.protocolFilters,
    memos,
  };
}

/** The Telemetry API's view of the proxy (access logs, tracing, stats per listener class). */
function proxyTelemetry(snap: PushSnapshot, proxy: ProxyNode): ProxyTelemetry {
  return buildProxyTelemetry({
    mesh: snap.mesh,
    proxy,
    rootNamespace: snap.rootNamespace,
    telemetries: snap.telemetriesFor(proxy),
    services: snap.services.all,
  });
}

/** A Prometheus provider collects some of the proxy's metrics: the TCP istio.stats filters run. */
function prometheusStats(telemetry: ProxyTelemetry): boolean {
  return telemetry.stats("sidecarOutbound") !== undefined || telemetry.stats("sidecarInbound") !== undefined;
}

/** The outbound DestinationRule the proxy applies to a host its scope sees. */
function destinationRuleFor(
  snap: PushSnapshot,
  proxy: ProxyNode,
): (hostname: string) => DestinationRuleSpec | undefined {
  const scope = snap.sidecarScope(proxy);
  return (hostname) => scope.destinationRule("outbound", proxy.labels, hostname)?.rule.spec;
}

/** What of a scope can make proxies sharing it build different outbound listeners, found once per scope. */
interface ScopeOutboundReads {
  /**
   * Label selectors the outbound builders match the proxy's labels against: outbound DestinationRules'
   * workloadSelectors (tcp_proxy settings and tunnels) and VirtualService tcp/tls matches' sourceLabels.
   */
  selectors: readonly Readonly<Record<string, string>>[];
  /** Headless service ports: each endpoint address gets a listener, except the proxy's own IP. */
  headless: readonly { service: Service; port: number }[];
}

const SCOPE_OUTBOUND_READS = weakTable<SidecarScope, ScopeOutboundReads>("lds/scopeOutboundReads");

function outboundReadsOf(memos: Memos, scope: SidecarScope): ScopeOutboundReads {
  const scopeOutboundReads = memos.weak(SCOPE_OUTBOUND_READS);
  let reads = scopeOutboundReads.get(scope);
  if (reads) return reads;
  const selectors = new Map<string, Readonly<Record<string, string>>>();
  const addSelector = (labels: Readonly<Record<string, string>>) => selectors.set(JSON.stringify(labels), labels);
  for (const service of scope.services) {
    for (const rule of scope.destinationRules(service.hostname)) {
      const selector = rule.rule.spec?.workloadSelector;
      if (selector) addSelector(selector.matchLabels ?? {});
    }
  }
  const headless: { service: Service; port: number }[] = [];
  for (const listener of scope.egressListeners) {
    for (const vs of listener.virtualServices) {
      for (const rule of [...(vs.spec?.tcp ?? []), ...(vs.spec?.tls ?? [])]) {
        for (const match of rule.match ?? []) if (match.sourceLabels) addSelector(match.sourceLabels);
      }
    }
    const egressPort = listener.egress?.port?.number;
    for (const service of listener.services) {
      if (service.resolution !== "Passthrough" || service.defaultAddress !== UNSPECIFIED_IP) continue;
      for (const port of egressPort ? [egressPort] : service.ports.map((p) => p.port)) headless.push({ service, port });
    }
  }
  reads = { selectors: [...selectors.values()], headless };
  scopeOutboundReads.set(scope, reads);
  return reads;
}

/**
 * The Telemetry API's answers for one listener class as text (their encoded form): they embed the
 * proxy's labels, namespace, mesh id or id where the providers ask for them, and proxies with equal
 * answers build equal listeners.
 */
function telemetryKey(telemetry: ProxyTelemetry, listenerClass: ListenerClass): string {
  const { tracing, useRequestIdForTraceSampling } = telemetry.tracing(listenerClass);
  const encoded = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
  return JSON.stringify([
    telemetry.accessLogs(listenerClass)?.map((log) => encoded(encodeMessage(accesslog.AccessLogSchema, log))),
    tracing && encoded(encodeMessage(hcm.HttpConnectionManager_TracingSchema, tracing)),
    useRequestIdForTraceSampling,
    telemetry.stats(listenerClass),
  ]);
}

/** Everything a sidecar's outbound listeners read; see sidecarOutboundListeners. */
interface OutboundListenersKey {
  configNamespace: string;
  interceptionMode: string;
  /** Wildcard and localhost binds, auto-allocated addresses and DNS lookup families follow the IP families. */
  ipv4: boolean;
  ipv6: boolean;
  /** The proxy's own IP when a headless port's endpoints hold it (it gets no listener of its own). */
  ownHeadlessIp: string | undefined;
  /** Which of the scope's label selectors the proxy's labels match, one digit each. */
  selectorMatches: string;
  dnsCapture: unknown;
  /** With ALLOW_ANY_DYNAMIC_DNS: the DNS cache reads the node's INSTANCE_IPS and DNS proxy. */
  dynamicDns: readonly unknown[] | undefined;
  exactBalance: unknown;
  httpProxyPort: unknown;
  idleTimeout: unknown;
  http10: unknown;
  prometheusStats: boolean;
  /** The Telemetry API's answers for sidecarOutbound (telemetryKey). */
  telemetry: string;
  domainSuffix: string;
  persistentSessions: boolean;
  protocolFilters: object;
  scope: SidecarScope;
  mesh: MeshConfig;
  services: object;
  extensions: readonly TrafficExtension[];
  headlessEndpoints: readonly (readonly ServiceEndpoint[])[];
}

/**
 * A listener as the sidecar tables keep it: built, or packed (its encoding alone). A workload's
 * listeners are kept while its pods connect, and only sent again: packed, the scoped 2,000-sidecar
 * sync peaked ~15 MiB lower.
 */
export type ListenerResource = listener.Listener | PackedMessage;

/** The listener of a kept one (decoded, when packed). */
function unpackListener(l: ListenerResource): listener.Listener {
  return unpacked(listener.ListenerSchema, l);
}

/**
 * `listeners`, packed when `pack` (the proxy that built them has no EnvoyFilter patches: the pods of
 * a workload share their patches, and patched listeners are decoded to be patched).
 */
function packListeners(listeners: listener.Listener[], pack: boolean): ListenerResource[] {
  return pack ? listeners.map((l) => packed(listener.ListenerSchema, TypeUrl.Listener, l.name, l)) : listeners;
}

const OUTBOUND_LISTENERS = resourceTable<ListenerResource[], OutboundListenersKey>({
  name: "lds/sidecarOutbound",
  typeUrl: TypeUrl.Listener,
  dropAtRest: true,
  key: {
    configNamespace: "value",
    interceptionMode: "value",
    ipv4: "value",
    ipv6: "value",
    ownHeadlessIp: "value",
    selectorMatches: "value",
    dnsCapture: "value",
    dynamicDns: "value",
    exactBalance: "value",
    httpProxyPort: "value",
    idleTimeout: "value",
    http10: "value",
    prometheusStats: "value",
    telemetry: "text",
    domainSuffix: "value",
    persistentSessions: "value",
    protocolFilters: "value",
    scope: "object",
    mesh: "object",
    services: "object",
    extensions: "objects",
    headlessEndpoints: "objects",
  },
  resources: (listeners) => listeners.map((l) => ({ name: l.name, resource: l })),
});

/**
 * The sidecar's outbound listeners (per port, HTTP proxy, virtualOutbound), shared by the proxies of a
 * class: the key holds every field of the proxy the outbound builders read (or what they derive from
 * it: label selector matches, Telemetry answers), the inputs the scope, mesh, services, TrafficExtensions and
 * headless endpoint lists by identity. Pod IPs and labels no selector reads stay out, so the pods of a
 * namespace share one build.
 */
function sidecarOutboundListeners(
  cache: XdsCache,
  push: MeshPush,
  proxy: ProxyNode,
  endpoints: EndpointLookup,
  telemetry: ProxyTelemetry,
  extensions: readonly TrafficExtension[],
  pack: boolean,
): ListenerResource[] {
  const snap = push.snapshot;
  const scope = snap.sidecarScope(proxy);
  const reads = outboundReadsOf(cache, scope);
  const allowAnyDynamicDns = scope.outboundTrafficPolicy.mode === "ALLOW_ANY_DYNAMIC_DNS";
  const headlessEndpoints = reads.headless.map(({ service, port }) =>
    endpoints.endpointsFor(service.hostname, port, service.namespace),
  );
  const ownIp = proxy.ipAddresses[0];
  const meta = proxy.metadata;
  const key: OutboundListenersKey = {
    configNamespace: proxy.configNamespace,
    interceptionMode: interceptionMode(proxy),
    ipv4: proxy.ipAddresses.some((ip) => isIPv4(ip)),
    ipv6: proxy.ipAddresses.some((ip) => isIPv6(ip)),
    ownHeadlessIp: headlessEndpoints.some((list) => list.some((e) => e.address === ownIp)) ? ownIp : undefined,
    selectorMatches: reads.selectors.map((selector) => (labelsContain(proxy.labels, selector) ? 1 : 0)).join(""),
    dnsCapture: meta.DNS_CAPTURE,
    dynamicDns: allowAnyDynamicDns ? [meta.INSTANCE_IPS, meta.DNS_PROXY_ADDR] : undefined,
    exactBalance: meta.OUTBOUND_LISTENER_EXACT_BALANCE,
    httpProxyPort: meta.HTTP_PROXY_PORT,
    idleTimeout: meta.IDLE_TIMEOUT,
    http10: meta.HTTP10,
    prometheusStats: prometheusStats(telemetry),
    telemetry: telemetryKey(telemetry, "sidecarOutbound"),
    domainSuffix: snap.domainSuffix,
    persistentSessions: snap.persistentSessions,
    protocolFilters: snap.protocolFilters,
    scope,
    mesh: snap.mesh,
    services: snap.services,
    extensions,
    headlessEndpoints,
  };
  return cache.resources(OUTBOUND_LISTENERS).get(push, key, (status) => {
    const withAddress = listenAddresses(snap, proxy);
    const built = buildSidecarOutboundListeners({
      ...listenerEnv(cache, snap, proxy, telemetry, extensions),
      services: scope.services.map(withAddress),
      egressListeners: scope.egressListeners.map((l) => ({ ...l, services: l.services.map(withAddress) })),
      endpointAddressesFor: (service, port) =>
        endpoints.endpointsFor(service.hostname, port, service.namespace).map((e) => e.address),
      registryOnly: scope.outboundTrafficPolicy.mode === "REGISTRY_ONLY",
      egressProxy: scope.outboundTrafficPolicy.egressProxy,
      allowAnyDynamicDns,
      prometheusStats: prometheusStats(telemetry),
      domainSuffix: snap.domainSuffix,
      destinationRuleFor: destinationRuleFor(snap, proxy),
      report: status.reporter(proxy.id),
    });
    return packListeners(built, pack);
  });
}

/** Everything a sidecar's inbound listeners read; see sidecarInboundListeners. */
interface InboundListenersKey {
  configNamespace: string;
  interceptionMode: string;
  ipv4: boolean;
  ipv6: boolean;
  /** Listeners bound to a port listen on the pod's IP. */
  boundIp: string | undefined;
  exactBalance: unknown;
  idleTimeout: unknown;
  http10: unknown;
  ports: readonly InboundPort[];
  mtlsMode: string;
  mtlsPerPort: readonly (readonly [number, string])[];
  /** The attached AuthorizationPolicies the workload's labels select, by action (the objects are inputs). */
  selectedAuthz: readonly (readonly string[] | undefined)[];
  /** How many policies of each kind are attached (their objects are inputs). */
  attachedCounts: readonly number[];
  prometheusStats: boolean | undefined;
  /** The Telemetry API's answers for sidecarInbound (telemetryKey). */
  telemetry: string;
  persistentSessions: boolean;
  protocolFilters: object;
  mesh: MeshConfig;
  services: object;
  authorizationPolicies: readonly AuthorizationPolicy[];
  requestAuthentications: readonly RequestAuthentication[];
  extensions: readonly TrafficExtension[];
}

const INBOUND_LISTENERS = resourceTable<ListenerResource[], InboundListenersKey>({
  name: "lds/sidecarInbound",
  typeUrl: TypeUrl.Listener,
  dropAtRest: true,
  key: {
    configNamespace: "value",
    interceptionMode: "value",
    ipv4: "value",
    ipv6: "value",
    boundIp: "value",
    exactBalance: "value",
    idleTimeout: "value",
    http10: "value",
    ports: "value",
    mtlsMode: "value",
    mtlsPerPort: "value",
    selectedAuthz: "value",
    attachedCounts: "value",
    prometheusStats: "value",
    telemetry: "text",
    persistentSessions: "value",
    protocolFilters: "value",
    mesh: "object",
    services: "object",
    authorizationPolicies: "objects",
    requestAuthentications: "objects",
    extensions: "objects",
  },
  resources: (listeners) => listeners.map((l) => ({ name: l.name, resource: l })),
});

/**
 * The sidecar's inbound listeners (virtualInbound, or per-port listeners bound to the pod), shared by
 * the proxies whose inbound inputs are alike (the pods of one workload): the key holds the proxy fields
 * the inbound builders read (the pod IP only when a listener binds to it), its inbound ports and mTLS
 * modes, which of the attached AuthorizationPolicies it selects and its Telemetry answers; the attached
 * policy objects, mesh and services are inputs by identity. Port conflicts are reported per proxy.
 */
function sidecarInboundListeners(
  cache: XdsCache,
  push: MeshPush,
  proxy: ProxyNode,
  telemetry: ProxyTelemetry,
  attached: AttachedPolicies,
  pack: boolean,
): ListenerResource[] {
  const snap = push.snapshot;
  const ports = sidecarInboundTargets(snap, proxy).map((t) => t.listener);
  reportInboundConflicts(ports, proxy.id, push.status.reporter(proxy.id));
  const mtls = snap.effectiveMtls(proxy);
  const policies = proxyPolicies(cache, snap, proxy, telemetry, attached);
  const authz = policies.authz;
  const mode = interceptionMode(proxy);
  const meta = proxy.metadata;
  const key: InboundListenersKey = {
    configNamespace: proxy.configNamespace,
    interceptionMode: mode,
    ipv4: proxy.ipAddresses.some((ip) => isIPv4(ip)),
    ipv6: proxy.ipAddresses.some((ip) => isIPv6(ip)),
    boundIp: mode === "NONE" || ports.some((p) => p.bindToPort) ? proxy.ipAddresses[0] : undefined,
    exactBalance: meta.INBOUND_LISTENER_EXACT_BALANCE,
    idleTimeout: meta.IDLE_TIMEOUT,
    http10: meta.HTTP10,
    ports,
    mtlsMode: mtls.mode,
    mtlsPerPort: [...mtls.perPort],
    selectedAuthz: [authz?.custom, authz?.deny, authz?.allow, authz?.audit].map((selected) =>
      selected?.map((p) => `${p.namespace}/${p.name}`),
    ),
    attachedCounts: [
      attached.authorizationPolicies.length,
      attached.requestAuthentications.length,
      attached.extensions.length,
    ],
    prometheusStats: policies.prometheusStats,
    telemetry: telemetryKey(telemetry, "sidecarInbound"),
    persistentSessions: snap.persistentSessions,
    protocolFilters: snap.protocolFilters,
    mesh: snap.mesh,
    services: snap.services,
    authorizationPolicies: attached.authorizationPolicies,
    requestAuthentications: attached.requestAuthentications,
    extensions: attached.extensions,
  };
  return cache.resources(INBOUND_LISTENERS).get(push, key, () => {
    const built = buildSidecarInboundListeners({
      proxy,
      mesh: snap.mesh,
      telemetry,
      extensions: attached.extensions,
      persistentSessions: snap.persistentSessions,
      protocolFilters: snap.protocolFilters,
      ports,
      mtls,
      trustDomains: trustDomains(snap),
      policies,
      memos: cache,
    });
    return packListeners(built, pack);
  });
}

function sidecarListeners(
  cache: XdsCache,
  push: MeshPush,
  proxy: ProxyNode,
  endpoints: EndpointLookup,
  pack: boolean,
): ListenerResource[] {
  const snap = push.snapshot;
  const telemetry = proxyTelemetry(snap, proxy);
  const attached = attachedPolicies(snap, proxy);
  return [
    ...sidecarOutboundListeners(cache, push, proxy, endpoints, telemetry, attached.extensions, pack),
    ...sidecarInboundListeners(cache, push, proxy, telemetry, attached, pack),
  ];
}

function routerListeners(cache: XdsCache, snap: PushSnapshot, proxy: ProxyNode): listener.Listener[] {
  const merged = snap.mergedGateway(proxy);
  if (!merged) return [];
  const scope = snap.sidecarScope(proxy);
  const telemetry = proxyTelemetry(snap, proxy);
  return buildGatewayListeners({
    proxy,
    mesh: snap.mesh,
    telemetry,
    persistentSessions: snap.persistentSessions,
    protocolFilters: snap.protocolFilters,
    ports: merged.ports,
    quicPorts: merged.quicPorts,
    virtualServicesFor: (gateway) => snap.virtualServicesForGateway(proxy.configNamespace, gateway),
    services: scope.services,
    destinationRuleFor: destinationRuleFor(snap, proxy),
    policies: proxyPolicies(cache, snap, proxy, telemetry),
    domainSuffix: snap.domainSuffix,
    memos: cache,
  });
}

/**
 * Every listener of the proxy, in Istio's order, with its EnvoyFilter patches applied last, as LDS
 * sends them: a sidecar's may be packed (see ListenerResource).
 */
export function listenerResources(
  push: MeshPush,
  proxy: ProxyNode,
  endpoints: EndpointLookup,
  cache: XdsCache,
): ListenerResource[] {
  const snap = push.snapshot;
  const patches = patchSetFor(cache, snap.envoyFiltersFor(proxy), proxy);
  if (proxy.type === "waypoint") return patchWaypointListeners(patches, waypointListeners(cache, snap, proxy, patches));
  if (proxy.type !== "sidecar") return patchGeneratedListeners(patches, routerListeners(cache, snap, proxy), true);
  const listeners = sidecarListeners(cache, push, proxy, endpoints, patches.empty);
  return patches.empty ? listeners : patchGeneratedListeners(patches, listeners.map(unpackListener), false);
}

/** Every listener of the proxy (listenerResources), each a message. */
export function buildListeners(
  push: MeshPush,
  proxy: ProxyNode,
  endpoints: EndpointLookup,
  cache: XdsCache,
): listener.Listener[] {
  return listenerResources(push, proxy, endpoints, cache).map(unpackListener);
}

/**
 * A waypoint's listeners (Istio's buildWaypointInbound) from its services (findWaypointResources),
 * their VirtualServices and policies, and the workloads it serves directly. Built per push, not cached:
 * waypoints are few.
 */
function waypointListeners(
  cache: XdsCache,
  snap: PushSnapshot,
  proxy: ProxyNode,
  patches: PatchSet,
): listener.Listener[] {
  const telemetry = proxyTelemetry(snap, proxy);
  const scope = snap.sidecarScope(proxy);
  const extensions = snap.trafficExtensionsFor(proxy);
  const meshVirtualServices = scope.egressListeners[0]?.virtualServices ?? [];
  const services = snap.waypointServices(proxy).map((service) => ({
    service,
    addresses: waypointVips(snap, proxy, service),
    // Only routes of the service's namespace or the waypoint's own apply.
    virtualServices: meshVirtualServices.filter(
      (vs) =>
        (vs.metadata.namespace === proxy.configNamespace || vs.metadata.namespace === service.namespace) &&
        (vs.spec?.hosts ?? []).some((host) => hostsMatch(host, service.hostname)),
    ),
    policies: waypointPolicies(cache, snap, proxy, telemetry, extensions, service),
    defaultRouteHash: topLevelHashPolicy(scope.destinationRule("inbound", proxy.labels, service.hostname)?.rule.spec),
  }));
  return buildWaypointListeners({
    ...listenerEnv(cache, snap, proxy, telemetry, extensions),
    services,
    workloads: snap.waypointWorkloads(proxy).map((w) => ({ addresses: w.workload.addresses.map(ipString) })),
    policies: waypointPolicies(cache, snap, proxy, telemetry, extensions, undefined),
    lookupService: (hostname) => scope.service(hostname),
    destinationRuleFor: destinationRuleFor(snap, proxy),
    hashPolicy: hashPolicyFor(scope, proxy),
    patchDefaultRoute: patches.empty ? undefined : (rc) => patchWaypointDefaultRoute(patches, rc),
  });
}

/**
 * A service's VIPs as a waypoint sees them (Istio's GetAllAddressesForProxy): its addresses, else the
 * ones allocated for it (a waypoint always takes them with IP autoallocation), of the proxy's families
 * unless it has both; else its default address.
 */
function waypointVips(snap: PushSnapshot, proxy: ProxyNode, service: Service): string[] {
  let addresses = service.addresses.filter((a) => a !== UNSPECIFIED_IP);
  if (addresses.length === 0 && (snap.ipAutoallocate || proxy.metadata.DNS_AUTO_ALLOCATE === true)) {
    addresses = [...snap.autoAllocatedAddresses(service)];
  }
  const v4 = proxy.ipAddresses.some((ip) => isIPv4(ip));
  const v6 = proxy.ipAddresses.some((ip) => isIPv6(ip));
  if (!(v4 && v6)) addresses = addresses.filter((a) => (isIPv4(ipOf(a)) ? v4 : v6));
  if (addresses.length > 0) return addresses;
  return service.defaultAddress ? [service.defaultAddress] : [];
}

/** The IP of an address or CIDR. */
function ipOf(address: string): string {
  const slash = address.indexOf("/");
  return slash >= 0 ? address.slice(0, slash) : address;
}
