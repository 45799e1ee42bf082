// A proxy's clusters (Istio's configgen BuildClusters): the outbound clusters of every service its
// scope sees, with the DestinationRule for the host; sidecars add the inbound clusters of their service
// ports, routers the SNI-DNAT clusters of AUTO_PASSTHROUGH hosts. A waypoint gets its own clusters and
// the inbound VIP clusters of the services it serves instead. Values proxies share are cached.

import type { cluster } from "../api/index.ts";
import { TypeUrl } from "../api/index.ts";
import type { MeshConfig } from "../config/index.ts";
import type {
  ConsolidatedDestinationRule,
  MeshPush,
  MtlsMode,
  NodeType,
  ProxyNode,
  PushMetric,
  SidecarScope,
} from "../model/index.ts";
import { hostsMatch } from "../model/index.ts";
import {
  assembleClusters,
  buildInboundCluster,
  buildInboundVipClusters,
  buildOutboundClusters,
  buildSniDnatClusters,
  buildSpecialClusters,
  buildWaypointClusters,
  type ProxyClusters,
  parseClusterName,
  type SpecialClusters,
  type WaypointClusters,
} from "../networking/cluster/index.ts";
import { patchGeneratedClusters, patchSetFor, patchWaypointClusters } from "../networking/envoyfilter/index.ts";
import type { EndpointLookup, Service, ServiceEndpoint } from "../registry/index.ts";
import { type Memos, mapTable, weakTable } from "../util/index.ts";
import { KeyFormat } from "./cache/keys.ts";
import { resourceTable, type XdsCache } from "./cache/xds-cache.ts";
import { type InboundTarget, sidecarInboundTargets } from "./inbound-targets.ts";
import {
  appliedRule,
  type EndpointView,
  endpointView,
  hasInlineEndpoints,
  ipFamilies,
  labelValues,
  type ProxyClassTable,
  proxyClassValue,
  scopeTraits,
} from "./proxy-view.ts";

/** Which clusters of a service: outbound, a gateway's SNI-DNAT ones, or a waypoint's inbound VIP ones. */
type ServiceClusterKind = "outbound" | "sniDnat" | "inboundVip";

/** Everything the outbound (SNI-DNAT, inbound VIP) clusters of one service read. */
interface ServiceClustersKey {
  kind: ServiceClusterKind;
  proxyType: NodeType;
  ipFamilies: string;
  /** The proxy's endpoint view, for DNS services only (their endpoints are inline). */
  endpointView: EndpointView | undefined;
  /** The namespace-wide PeerAuthentication mode of the service's namespace. */
  serviceMtlsMode: MtlsMode;
  redisFilter: boolean;
  /** The service's host, namespace and ports. */
  service: Service;
  /** The DestinationRule the proxy applies to the service's host (inbound for inbound VIP clusters), with its sources. */
  rule: ConsolidatedDestinationRule | undefined;
  mesh: MeshConfig;
  /** The endpoints of each service port. */
  portEndpoints: readonly (readonly ServiceEndpoint[])[];
}

const SERVICE_CLUSTERS = resourceTable<cluster.Cluster[], ServiceClustersKey>({
  name: "cds/serviceClusters",
  typeUrl: TypeUrl.Cluster,
  key: {
    kind: "value",
    proxyType: "value",
    ipFamilies: "value",
    endpointView: "text",
    serviceMtlsMode: "value",
    redisFilter: "value",
    service: "object",
    rule: "object",
    mesh: "object",
    portEndpoints: "objects",
  },
  resources: (clusters) => clusters.map((c) => ({ name: c.name, resource: c })),
});

// Every cluster shares the encoded Istio mTLS contexts: they read only ALPN and SANs (tls.ts bounds the map).
const ISTIO_TLS_CONTEXTS = mapTable<string, Uint8Array>("cds/istioTlsContexts");

/** What the outbound cluster keys read of the proxy, computed once per proxy. */
interface ProxyClusterView {
  scope: SidecarScope;
  ipFamilies: string;
  endpointView: EndpointView;
  /** The namespace-wide PeerAuthentication mode of each service namespace seen so far. */
  namespaceMtls: Map<string, MtlsMode>;
}

function proxyClusterView(memos: Memos, push: MeshPush, proxy: ProxyNode): ProxyClusterView {
  const scope = push.snapshot.sidecarScope(proxy);
  return { scope, ipFamilies: ipFamilies(proxy), endpointView: endpointView(memos, proxy), namespaceMtls: new Map() };
}

/**
 * Outbound (SNI-DNAT, inbound VIP) clusters of one service, shared by the proxies that see it through
 * the same rule: they read the proxy's type and IP families, and only DNS clusters (endpoints inline)
 * its view of endpoints (inline endpoints take no failoverPriority labels).
 */
function serviceClusters(
  cache: XdsCache,
  push: MeshPush,
  proxy: ProxyNode,
  view: ProxyClusterView,
  endpoints: EndpointLookup,
  service: Service,
  kind: ServiceClusterKind,
): cluster.Cluster[] {
  const snap = push.snapshot;
  // A waypoint applies the rule its services' own workloads would (Istio: inbound direction).
  const direction = kind === "inboundVip" ? "inbound" : "outbound";
  const rule = view.scope.destinationRule(direction, proxy.labels, service.hostname);
  // Istio infers the service's mTLS mode from the namespace-wide PeerAuthentication.
  const serviceMtlsMode =
    view.namespaceMtls.get(service.namespace) ??
    snap.effectiveMtls({ configNamespace: service.namespace, labels: {} }).mode;
  view.namespaceMtls.set(service.namespace, serviceMtlsMode);
  const redis = snap.protocolFilters.redis;
  const portEndpoints = service.ports.map((port) =>
    endpoints.endpointsFor(service.hostname, port.port, service.namespace),
  );
  const key: ServiceClustersKey = {
    kind,
    proxyType: proxy.type,
    ipFamilies: view.ipFamilies,
    endpointView: hasInlineEndpoints(service) ? view.endpointView : undefined,
    serviceMtlsMode,
    redisFilter: redis,
    service,
    rule,
    mesh: snap.mesh,
    portEndpoints,
  };
  return cache.resources(SERVICE_CLUSTERS).get(push, key, (status) => {
    const destinationRule = rule && appliedRule(rule);
    const report = status.reporter(proxy.id);
    const clusters: cluster.Cluster[] = [];
    for (let i = 0; i < service.ports.length; i++) {
      const input = {
        service,
        port: service.ports[i],
        destinationRule,
        proxy,
        mesh: snap.mesh,
        endpoints: portEndpoints[i],
        serviceMtlsMode,
        redisFilter: redis,
        istioTlsContexts: cache.map(ISTIO_TLS_CONTEXTS),
        report,
        memos: cache,
      };
      clusters.push(...SERVICE_CLUSTER_BUILDERS[kind](input));
    }
    return clusters;
  });
}

const SERVICE_CLUSTER_BUILDERS = {
  outbound: buildOutboundClusters,
  sniDnat: buildSniDnatClusters,
  inboundVip: buildInboundVipClusters,
} satisfies Record<ServiceClusterKind, unknown>;

const OUTBOUND_CLASSES: ProxyClassTable<cluster.Cluster[]> = weakTable("cds/outboundClasses");

/** What the outbound clusters of a scope read of the proxy (see serviceClusters and ScopeTraits). */
interface OutboundClassKey {
  proxyType: NodeType;
  ipFamilies: string;
  /** With DNS services in the scope. */
  endpointView: EndpointView | undefined;
  /** The values of the labels the scope's DestinationRule workloadSelectors name. */
  selectorLabelValues: readonly (string | null)[];
}

const OUTBOUND_CLASS_KEY = new KeyFormat<OutboundClassKey>({
  proxyType: "value",
  ipFamilies: "value",
  endpointView: "text",
  selectorLabelValues: "value",
});

/**
 * The outbound clusters of every service in the proxy's scope, shared by the proxies of the push that
 * read them alike: serviceClusters reads the proxy's type and IP families, its endpoint view for DNS
 * services, and its labels where a DestinationRule selects workloads.
 */
function outboundClusters(
  cache: XdsCache,
  push: MeshPush,
  proxy: ProxyNode,
  view: ProxyClusterView,
  endpoints: EndpointLookup,
): cluster.Cluster[] {
  const traits = scopeTraits(cache, view.scope);
  const key = OUTBOUND_CLASS_KEY.text(
    {
      proxyType: proxy.type,
      ipFamilies: view.ipFamilies,
      endpointView: traits.inlineEndpoints ? view.endpointView : undefined,
      selectorLabelValues: labelValues(proxy.labels, traits.selectorLabels),
    },
    cache,
  );
  return proxyClassValue(cache, OUTBOUND_CLASSES, push, endpoints, view.scope, key, () => {
    const clusters: cluster.Cluster[] = [];
    for (const s of view.scope.services) {
      clusters.push(...serviceClusters(cache, push, proxy, view, endpoints, s, "outbound"));
    }
    return clusters;
  });
}

/** Everything an inbound cluster reads. */
interface InboundClusterKey {
  targetPort: number;
  port: InboundTarget["port"];
  endpoint: InboundTarget["endpoint"];
  proxyType: NodeType;
  ipFamilies: string;
  mesh: MeshConfig;
  /** The inbound DestinationRule of the port's first service. */
  rule: ConsolidatedDestinationRule | undefined;
  sidecarConnectionPool: ReturnType<SidecarScope["inboundConnectionPool"]>;
  /** Every service declaring the port. */
  services: readonly Service[];
}

const INBOUND_CLUSTERS = resourceTable<cluster.Cluster, InboundClusterKey>({
  name: "cds/inboundClusters",
  typeUrl: TypeUrl.Cluster,
  key: {
    targetPort: "value",
    port: "value",
    endpoint: "value",
    proxyType: "value",
    ipFamilies: "value",
    mesh: "object",
    rule: "object",
    sidecarConnectionPool: "object",
    services: "objects",
  },
  resources: (c) => [{ name: c.name, resource: c }],
});

/**
 * Inbound clusters of a sidecar: one per inbound target port, with every service declaring it; shared
 * by the sidecars of a workload (they read the proxy's type and IP families).
 */
function inboundClusters(cache: XdsCache, push: MeshPush, proxy: ProxyNode): cluster.Cluster[] {
  const snap = push.snapshot;
  const scope = snap.sidecarScope(proxy);
  const byTargetPort = new Map<number, InboundTarget>();
  for (const target of sidecarInboundTargets(snap, proxy)) {
    const first = byTargetPort.get(target.listener.targetPort);
    if (first) first.services.push(...target.services);
    else byTargetPort.set(target.listener.targetPort, { ...target, services: [...target.services] });
  }
  return [...byTargetPort].map(([targetPort, { port, services, endpoint }]) => {
    const rule = services[0] && scope.destinationRule("inbound", proxy.labels, services[0].hostname);
    const sidecarConnectionPool = scope.inboundConnectionPool(targetPort);
    const key: InboundClusterKey = {
      targetPort,
      port,
      endpoint,
      proxyType: proxy.type,
      ipFamilies: ipFamilies(proxy),
      mesh: snap.mesh,
      rule,
      sidecarConnectionPool,
      services,
    };
    return cache.resources(INBOUND_CLUSTERS).get(push, key, () =>
      buildInboundCluster({
        targetPort,
        port,
        services,
        proxy,
        mesh: snap.mesh,
        destinationRule: rule && appliedRule(rule),
        sidecarConnectionPool,
        endpoint,
        memos: cache,
      }),
    );
  });
}

/** Everything the special clusters read. */
interface SpecialClustersKey {
  proxyType: NodeType;
  ipFamilies: string;
  /** With ALLOW_ANY_DYNAMIC_DNS: AllowAnyDynamicDNSCluster's DNS cache reads the node's INSTANCE_IPS and DNS proxy. */
  dnsCache: readonly unknown[] | undefined;
  mesh: MeshConfig;
}

const SPECIAL_CLUSTERS = resourceTable<SpecialClusters, SpecialClustersKey>({
  name: "cds/specialClusters",
  typeUrl: TypeUrl.Cluster,
  key: { proxyType: "value", ipFamilies: "value", dnsCache: "value", mesh: "object" },
  resources: (special) =>
    [...special.beforeInbound, ...special.afterInbound].map((c) => ({ name: c.name, resource: c })),
});

/** BlackHoleCluster, PassthroughCluster, ...: shared by the proxies of a type and IP families. */
function specialClusters(
  cache: XdsCache,
  push: MeshPush,
  proxy: ProxyNode,
  allowAnyDynamicDns: boolean,
): SpecialClusters {
  const mesh = push.snapshot.mesh;
  const { INSTANCE_IPS, DNS_CAPTURE, DNS_PROXY_ADDR } = proxy.metadata;
  const key: SpecialClustersKey = {
    proxyType: proxy.type,
    ipFamilies: ipFamilies(proxy),
    dnsCache: allowAnyDynamicDns ? [INSTANCE_IPS, DNS_CAPTURE, DNS_PROXY_ADDR] : undefined,
    mesh,
  };
  return cache
    .resources(SPECIAL_CLUSTERS)
    .get(push, key, () => buildSpecialClusters({ proxy, mesh, allowAnyDynamicDns, memos: cache }));
}

interface AssembledClusters {
  clusters: readonly cluster.Cluster[];
  /** The duplicate clusters assembling dropped, reported again for each proxy getting the list. */
  duplicates: [PushMetric, string, string | undefined][];
}

// Per push, the assembled lists by their parts' identities: proxies with the same parts share one list.
const ASSEMBLED_LISTS = weakTable<MeshPush, Map<string, AssembledClusters>>("cds/assembledLists");

/** What assembling reads: the proxy type (which says which of inbound and sniDnat the parts hold) and the parts. */
interface AssembledKey {
  proxyType: NodeType;
  outbound: readonly cluster.Cluster[];
  special: SpecialClusters;
  inbound: readonly cluster.Cluster[];
  sniDnat: readonly cluster.Cluster[];
}

const ASSEMBLED_KEY = new KeyFormat<AssembledKey>({
  proxyType: "value",
  outbound: "object",
  special: "object",
  inbound: "objects",
  sniDnat: "objects",
});

/** assembleClusters, shared by the proxies of the push whose parts are the same objects. */
function assembledClusters(
  cache: XdsCache,
  push: MeshPush,
  proxy: ProxyNode,
  parts: Pick<ProxyClusters, "outbound" | "inbound" | "sniDnat"> & { special: SpecialClusters },
): readonly cluster.Cluster[] {
  const byPush = cache.weak(ASSEMBLED_LISTS);
  let lists = byPush.get(push);
  if (!lists) {
    lists = new Map();
    byPush.set(push, lists);
  }
  const { outbound, special, inbound = [], sniDnat = [] } = parts;
  const key = ASSEMBLED_KEY.text({ proxyType: proxy.type, outbound, special, inbound, sniDnat }, cache);
  let assembled = lists.get(key);
  if (!assembled) {
    const duplicates: AssembledClusters["duplicates"] = [];
    const mesh = push.snapshot.mesh;
    const report = (metric: PushMetric, name: string, message?: string) => duplicates.push([metric, name, message]);
    assembled = { clusters: assembleClusters({ proxy, mesh, ...parts, report, memos: cache }), duplicates };
    lists.set(key, assembled);
  }
  const report = push.status.reporter(proxy.id);
  for (const [metric, name, message] of assembled.duplicates) report(metric, name, message);
  return assembled.clusters;
}

/**
 * Every cluster of the proxy, in Istio's order, with its EnvoyFilter patches applied last. Proxies of a
 * push with the same clusters and no cluster patches share the list.
 */
export function buildClusters(
  push: MeshPush,
  proxy: ProxyNode,
  endpoints: EndpointLookup,
  cache: XdsCache,
): readonly cluster.Cluster[] {
  const snap = push.snapshot;
  if (proxy.type === "waypoint") return waypointClusters(cache, push, proxy, endpoints);
  const patches = patchSetFor(cache, snap.envoyFiltersFor(proxy), proxy);
  const view = proxyClusterView(cache, push, proxy);
  const outbound = outboundClusters(cache, push, proxy, view, endpoints);
  if (proxy.type === "sidecar") {
    const allowAnyDynamicDns = view.scope.outboundTrafficPolicy.mode === "ALLOW_ANY_DYNAMIC_DNS";
    const clusters = assembledClusters(cache, push, proxy, {
      outbound,
      inbound: inboundClusters(cache, push, proxy),
      special: specialClusters(cache, push, proxy, allowAnyDynamicDns),
    });
    if (!patches.has("CLUSTER")) return clusters;
    const hostsByPort = new Map<number, string[]>();
    for (const { listener, services } of sidecarInboundTargets(snap, proxy)) {
      hostsByPort.set(listener.targetPort, [
        ...(hostsByPort.get(listener.targetPort) ?? []),
        ...services.map((s) => s.hostname),
      ]);
    }
    return patchGeneratedClusters(patches, clusters, false, (c) => hostsByPort.get(inboundPort(c.name)) ?? []);
  }
  const sniHosts = [...(snap.mergedGateway(proxy)?.autoPassthroughSniHosts ?? [])];
  const sniDnat = view.scope.services
    .filter((s) => sniHosts.some((h) => hostsMatch(h, s.hostname)))
    .flatMap((s) => serviceClusters(cache, push, proxy, view, endpoints, s, "sniDnat"));
  const clusters = assembledClusters(cache, push, proxy, {
    outbound,
    sniDnat,
    special: specialClusters(cache, push, proxy, false),
  });
  return patches.has("CLUSTER") ? patchGeneratedClusters(patches, clusters, true) : clusters;
}

/** The port of an `inbound|port||` cluster; 0 for other names. */
function inboundPort(name: string): number {
  const parsed = parseClusterName(name);
  return parsed?.direction === "inbound" ? parsed.port : 0;
}

/** Everything a waypoint's own clusters read. */
interface WaypointClustersKey {
  namespace: string;
  mesh: MeshConfig;
}

const WAYPOINT_CLUSTERS = resourceTable<WaypointClusters, WaypointClustersKey>({
  name: "cds/waypointClusters",
  typeUrl: TypeUrl.Cluster,
  key: { namespace: "value", mesh: "object" },
  resources: (w) => [...w.beforeServices, ...w.afterServices].map((c) => ({ name: c.name, resource: c })),
});

/**
 * A waypoint's clusters (Istio's BuildClusters for a waypoint): main_internal and encap, the inbound
 * VIP clusters of each service it serves (oldest first), then connect_originate and the double-HBONE
 * pair, and those EnvoyFilter CLUSTER patches add in SIDECAR_INBOUND (Istio patches none of these).
 * Not yet: the outbound clusters of services its services' VirtualServices route to.
 */
function waypointClusters(
  cache: XdsCache,
  push: MeshPush,
  proxy: ProxyNode,
  endpoints: EndpointLookup,
): cluster.Cluster[] {
  const snap = push.snapshot;
  const mesh = snap.mesh;
  const own = cache
    .resources(WAYPOINT_CLUSTERS)
    .get(push, { namespace: proxy.configNamespace, mesh }, () =>
      buildWaypointClusters({ mesh, namespace: proxy.configNamespace, memos: cache }),
    );
  const view = proxyClusterView(cache, push, proxy);
  const vips = snap
    .waypointServices(proxy)
    .flatMap((service) => serviceClusters(cache, push, proxy, view, endpoints, service, "inboundVip"));
  const patches = patchSetFor(cache, snap.envoyFiltersFor(proxy), proxy);
  return patchWaypointClusters(patches, [...own.beforeServices, ...vips, ...own.afterServices]);
}
