// CDS: a proxy's clusters (Istio's pilot/pkg/xds/cds.go → configgen BuildClusters): the outbound
// clusters of every service its scope sees, with the DestinationRule for the host; sidecars add the
// inbound clusters of their service ports, routers the SNI-DNAT clusters of AUTO_PASSTHROUGH hosts.
import type { cluster } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { DestinationRuleTrafficPolicy } from "../../config/types/index.ts";
import type {
  ConsolidatedDestinationRule,
  MeshPush,
  MtlsMode,
  NodeType,
  ProxyNode,
  PushMetric,
  PushSnapshot,
  SidecarScope,
} from "../../model/index.ts";
import { hostsMatch } from "../../model/index.ts";
import {
  type AppliedDestinationRule,
  assembleClusters,
  buildInboundCluster,
  buildOutboundClusters,
  buildSniDnatClusters,
  buildSpecialClusters,
  type ProxyClusters,
  parseClusterName,
  type SpecialClusters,
} from "../../networking/cluster/index.ts";
import { patchGeneratedClusters, patchSetFor } from "../../networking/envoyfilter/index.ts";
import type { EndpointLookup, Service, ServiceEndpoint } from "../../registry/index.ts";
import { type Memos, mapTable, type WeakTable, weakTable } from "../../util/memo.ts";
import { KeyFormat } from "../cache/keys.ts";
import { resourceTable, type XdsCache } from "../cache/xds-cache.ts";
import type { Generator, XdsResource } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { cdsNeedsPush } from "./cds-needs-push.ts";
import { type InboundTarget, sidecarInboundTargets } from "./lds.ts";

/** The builders' view of a consolidated DestinationRule. */
export function appliedRule(rule: ConsolidatedDestinationRule): AppliedDestinationRule {
  return {
    name: rule.rule.metadata.name ?? "",
    namespace: rule.rule.metadata.namespace ?? "",
    spec: rule.rule.spec ?? { host: "" },
  };
}

/**
 * What of the proxy endpoint selection reads besides failoverPriority labels (cluster, network and its
 * view, locality): load assignments, and DNS clusters with their inline endpoints, depend on it.
 */
interface EndpointViewKey {
  clusterId: string;
  network: string | undefined;
  requestedNetworkView: readonly string[] | undefined;
  region: string;
  zone: string;
  subZone: string;
}

const ENDPOINT_VIEW = new KeyFormat<EndpointViewKey>({
  clusterId: "value",
  network: "value",
  requestedNetworkView: "value",
  region: "value",
  zone: "value",
  subZone: "value",
});

/** The proxy's endpoint view as key text (a `text` part of the keys reading it). */
export type EndpointView = string;

/** The proxy's endpoint view, written once per proxy and build. */
export function endpointView(proxy: ProxyNode): EndpointView {
  const { region, zone, subZone } = proxy.locality;
  return ENDPOINT_VIEW.text({
    clusterId: proxy.clusterId,
    network: proxy.metadata.NETWORK,
    requestedNetworkView: proxy.metadata.REQUESTED_NETWORK_VIEW,
    region,
    zone,
    subZone,
  });
}

/** The proxy's values of the label `names` (null where unset), a key part. */
export function labelValues(labels: Readonly<Record<string, string>>, names: readonly string[]): (string | null)[] {
  return names.map((n) => (Object.hasOwn(labels, n) ? labels[n] : null));
}

/** What of a scope's services and DestinationRules decides which proxy fields its clusters and assignments read. */
export interface ScopeTraits {
  /** The label names DestinationRule workloadSelectors match: which rule applies reads these of the proxy. */
  selectorLabels: readonly string[];
  /** The label names failoverPriority entries name (load assignments compare them); undefined without any. */
  failoverPriorityLabels: readonly string[] | undefined;
  /** A DNS service: its clusters carry endpoints inline, chosen by the proxy's endpoint view. */
  inlineEndpoints: boolean;
}

// Scopes are immutable: their traits are computed once.
const SCOPE_TRAITS = weakTable<SidecarScope, ScopeTraits>("cds/scopeTraits");

export function scopeTraits(memos: Memos, scope: SidecarScope): ScopeTraits {
  const table = memos.weak(SCOPE_TRAITS);
  let traits = table.get(scope);
  if (!traits) {
    const selectorLabels = new Set<string>();
    const failoverPriority: string[] = [];
    for (const service of scope.services) {
      for (const { rule } of scope.destinationRules(service.hostname)) {
        for (const name of Object.keys(rule.spec?.workloadSelector?.matchLabels ?? {})) selectorLabels.add(name);
        const policies = [rule.spec?.trafficPolicy, ...(rule.spec?.subsets ?? []).map((s) => s.trafficPolicy)];
        failoverPriority.push(...policies.flatMap(failoverPriorityOf));
      }
    }
    traits = {
      selectorLabels: [...selectorLabels].sort(),
      failoverPriorityLabels: failoverPriority.length > 0 ? failoverPriorityLabelNames(failoverPriority) : undefined,
      inlineEndpoints: scope.services.some(hasInlineEndpoints),
    };
    table.set(scope, traits);
  }
  return traits;
}

/** Every failoverPriority entry of a traffic policy, its port-level settings' included. */
function failoverPriorityOf(policy: DestinationRuleTrafficPolicy | undefined): string[] {
  const balancers = [policy?.loadBalancer, ...(policy?.portLevelSettings ?? []).map((p) => p.loadBalancer)];
  return balancers.flatMap((lb) => lb?.localityLbSetting?.failoverPriority ?? []);
}

/** The label names of failoverPriority entries (`label` or `label=value`), sorted, once each. */
export function failoverPriorityLabelNames(entries: readonly string[]): string[] {
  return [...new Set(entries.map((entry) => entry.split("=")[0]))].sort();
}

function hasInlineEndpoints(service: Service): boolean {
  return service.resolution === "DNSLB" || service.resolution === "DNSRoundRobinLB";
}

/**
 * A memo table of values shared by the proxies of one class within one push: found by the push, the
 * endpoint lookup built from, the proxy's SidecarScope (all by identity) and a class key naming
 * everything else the value reads of the proxy. Unlike the resource caches it skips every per-resource
 * lookup, and it holds what its first build saw of the registry's endpoints until the next push (the
 * push an endpoint change brings).
 */
export type ProxyClassTable<T> = WeakTable<MeshPush, WeakMap<EndpointLookup, Map<SidecarScope, Map<string, T>>>>;

/** The value of `table` for the push, lookup, scope and class key, else `build`'s. */
export function proxyClassValue<T>(
  memos: Memos,
  table: ProxyClassTable<T>,
  push: MeshPush,
  endpoints: EndpointLookup,
  scope: SidecarScope,
  key: string,
  build: () => T,
): T {
  const byPush = memos.weak(table);
  let byLookup = byPush.get(push);
  if (!byLookup) {
    byLookup = new WeakMap();
    byPush.set(push, byLookup);
  }
  let byScope = byLookup.get(endpoints);
  if (!byScope) {
    byScope = new Map();
    byLookup.set(endpoints, byScope);
  }
  let byKey = byScope.get(scope);
  if (!byKey) {
    byKey = new Map();
    byScope.set(scope, byKey);
  }
  let value = byKey.get(key);
  if (value === undefined) {
    value = build();
    byKey.set(key, value);
  }
  return value;
}

/** Everything the outbound (or SNI-DNAT) clusters of one service read. */
interface ServiceClustersKey {
  sniDnat: boolean;
  proxyType: NodeType;
  ipFamilies: string;
  /** The proxy's endpoint view, for DNS services only (their endpoints are inline). */
  endpointView: EndpointView | undefined;
  /** The namespace-wide PeerAuthentication mode of the service's namespace. */
  serviceMtlsMode: MtlsMode;
  redisFilter: boolean;
  /** The service's host, namespace and ports. */
  service: Service;
  /** The DestinationRule the proxy applies to the service's host, with its sources. */
  rule: ConsolidatedDestinationRule | undefined;
  mesh: MeshConfig;
  /** The endpoints of each service port. */
  portEndpoints: readonly (readonly ServiceEndpoint[])[];
}

const SERVICE_CLUSTERS = resourceTable<cluster.Cluster[], ServiceClustersKey>({
  name: "cds/serviceClusters",
  typeUrl: TypeUrl.Cluster,
  key: {
    sniDnat: "value",
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

/** The proxy's IP families: "4", "6", "46", or "" without addresses. */
export function ipFamilies(proxy: ProxyNode): string {
  return [...new Set(proxy.ipAddresses.map((ip) => (ip.includes(":") ? "6" : "4")))].sort().join("");
}

/** What the outbound cluster keys read of the proxy, computed once per proxy. */
interface ProxyClusterView {
  scope: SidecarScope;
  ipFamilies: string;
  endpointView: EndpointView;
  /** The namespace-wide PeerAuthentication mode of each service namespace seen so far. */
  namespaceMtls: Map<string, MtlsMode>;
}

function proxyClusterView(push: MeshPush, proxy: ProxyNode): ProxyClusterView {
  const scope = push.snapshot.sidecarScope(proxy);
  return { scope, ipFamilies: ipFamilies(proxy), endpointView: endpointView(proxy), namespaceMtls: new Map() };
}

/**
 * Outbound (or SNI-DNAT) clusters of one service, shared by the proxies that see it through the same
 * rule: they read the proxy's type and IP families, and only DNS clusters (endpoints inline) its view
 * of endpoints (inline endpoints take no failoverPriority labels).
 */
function serviceClusters(
  cache: XdsCache,
  push: MeshPush,
  proxy: ProxyNode,
  view: ProxyClusterView,
  endpoints: EndpointLookup,
  service: Service,
  sniDnat: boolean,
): cluster.Cluster[] {
  const snap = push.snapshot;
  const rule = view.scope.destinationRule("outbound", proxy.labels, service.hostname);
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
    sniDnat,
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
      clusters.push(...(sniDnat ? buildSniDnatClusters(input) : buildOutboundClusters(input)));
    }
    return clusters;
  });
}

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
      clusters.push(...serviceClusters(cache, push, proxy, view, endpoints, s, false));
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
  const patches = patchSetFor(cache, snap.envoyFiltersFor(proxy), proxy);
  const view = proxyClusterView(push, proxy);
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
    .flatMap((s) => serviceClusters(cache, push, proxy, view, endpoints, s, true));
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

// The response resources of each cluster list (a shared list gives every proxy the same resources
// array), made of one resource per cluster object whatever lists hold it.
const LIST_RESOURCES = weakTable<readonly cluster.Cluster[], XdsResource[]>("cds/listResources");
const CLUSTER_RESOURCES = weakTable<cluster.Cluster, XdsResource>("cds/clusterResources");

function clusterResources(memos: Memos, clusters: readonly cluster.Cluster[]): XdsResource[] {
  const listResources = memos.weak(LIST_RESOURCES);
  let resources = listResources.get(clusters);
  if (!resources) {
    const clusterResourceOf = memos.weak(CLUSTER_RESOURCES);
    resources = clusters.map((c) => {
      let resource = clusterResourceOf.get(c);
      if (!resource) {
        resource = { name: c.name, resource: c };
        clusterResourceOf.set(c, resource);
      }
      return resource;
    });
    listResources.set(clusters, resources);
  }
  return resources;
}

/** CDS is wildcard: every cluster, on pushes that may change clusters. */
export function cdsGenerator(endpoints: EndpointLookup, cache: XdsCache): Generator<PushSnapshot> {
  return {
    generate(proxy, _watched, req) {
      const autoPassthrough = () => (req.push.snapshot.mergedGateway(proxy)?.autoPassthroughSniHosts.size ?? 0) > 0;
      if (!cdsNeedsPush(req, proxy, autoPassthrough)) return undefined;
      return { resources: clusterResources(cache, buildClusters(req.push, proxy, endpoints, cache)) };
    },
  };
}
