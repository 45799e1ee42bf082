// CDS: a proxy's clusters (Istio's pilot/pkg/xds/cds.go → configgen BuildClusters): the outbound
// clusters of every service its scope sees, with the DestinationRule for the host; sidecars add the
// inbound clusters of their service ports, routers the SNI-DNAT clusters of AUTO_PASSTHROUGH hosts.
import type { cluster } from "../../api/index.ts";
import type { DestinationRuleTrafficPolicy } from "../../config/types/index.ts";
import type {
  ConsolidatedDestinationRule,
  MeshPush,
  MtlsMode,
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
  type IstioTlsContextCache,
  type ProxyClusters,
  parseClusterName,
  type SpecialClusters,
} from "../../networking/cluster/index.ts";
import { patchGeneratedClusters, patchSetFor } from "../../networking/envoyfilter/index.ts";
import type { EndpointLookup, Service } from "../../registry/index.ts";
import type { Generator, XdsResource } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { cdsNeedsPush } from "./cds-needs-push.ts";
import { type InboundTarget, sidecarInboundTargets } from "./lds.ts";
import { objectId, resourceCache } from "./push-cache.ts";

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
export function endpointViewKey(proxy: ProxyNode): string {
  const { region, zone, subZone } = proxy.locality;
  return [
    proxy.clusterId,
    proxy.metadata.NETWORK,
    proxy.metadata.REQUESTED_NETWORK_VIEW?.join(","),
    `${region}/${zone}/${subZone}`,
  ].join("|");
}

/** The proxy's values of the label `names` (null where unset) as a key part; "" for no names. */
export function labelValuesKey(labels: Readonly<Record<string, string>>, names: readonly string[]): string {
  return names.length === 0 ? "" : JSON.stringify(names.map((n) => (Object.hasOwn(labels, n) ? labels[n] : null)));
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
const scopeTraitsCache = new WeakMap<SidecarScope, ScopeTraits>();

export function scopeTraits(scope: SidecarScope): ScopeTraits {
  let traits = scopeTraitsCache.get(scope);
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
    scopeTraitsCache.set(scope, traits);
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
 * A memo of values shared by the proxies of one class within one push: found by the endpoint lookup
 * built from, the proxy's SidecarScope (both by identity) and a key naming everything else the value
 * reads of the proxy. Unlike the resource caches it skips every per-resource lookup, and it holds what
 * its first build saw of the registry's endpoints until the next push (the push an endpoint change brings).
 */
export function proxyClassMemo<T>(): (
  push: MeshPush,
  endpoints: EndpointLookup,
  scope: SidecarScope,
  key: string,
  build: () => T,
) => T {
  const byPush = new WeakMap<MeshPush, WeakMap<EndpointLookup, Map<SidecarScope, Map<string, T>>>>();
  return (push, endpoints, scope, key, build) => {
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
  };
}

const outboundCache = resourceCache<cluster.Cluster[]>(TypeUrl.Cluster, (clusters) =>
  clusters.map((c) => ({ name: c.name, resource: c })),
);

// Every cluster shares the encoded Istio mTLS contexts: they read only ALPN and SANs (tls.ts bounds the map).
const istioTlsContexts: IstioTlsContextCache = new Map();

/** The proxy's IP families: "4", "6", "46", or "" without addresses. */
export function ipFamilies(proxy: ProxyNode): string {
  return [...new Set(proxy.ipAddresses.map((ip) => (ip.includes(":") ? "6" : "4")))].sort().join("");
}

/** What the outbound cluster keys read of the proxy, computed once per proxy. */
interface ProxyClusterView {
  scope: SidecarScope;
  ipFamilies: string;
  endpointView: string;
  /** The namespace-wide PeerAuthentication mode of each service namespace seen so far. */
  namespaceMtls: Map<string, MtlsMode>;
}

function proxyClusterView(push: MeshPush, proxy: ProxyNode): ProxyClusterView {
  const scope = push.snapshot.sidecarScope(proxy);
  return { scope, ipFamilies: ipFamilies(proxy), endpointView: endpointViewKey(proxy), namespaceMtls: new Map() };
}

/**
 * Outbound (or SNI-DNAT) clusters of one service, shared by the proxies that see it through the same
 * rule: they read the proxy's type and IP families, and only DNS clusters (endpoints inline) its view
 * of endpoints (inline endpoints take no failoverPriority labels).
 */
function serviceClusters(
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
  const endpointView = hasInlineEndpoints(service) ? view.endpointView : "";
  const redis = snap.protocolFilters.redis;
  // The service's host and namespace, and the rule's sources, go by the identity of those inputs.
  const key = `${sniDnat ? "sni" : "out"}|${proxy.type}|${view.ipFamilies}|${endpointView}|${serviceMtlsMode}|${redis}`;
  const portEndpoints = service.ports.map((port) =>
    endpoints.endpointsFor(service.hostname, port.port, service.namespace),
  );
  return outboundCache(push, key, [service, rule, snap.mesh, ...portEndpoints], (status) => {
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
        istioTlsContexts,
        report,
      };
      clusters.push(...(sniDnat ? buildSniDnatClusters(input) : buildOutboundClusters(input)));
    }
    return clusters;
  });
}

const outboundClasses = proxyClassMemo<cluster.Cluster[]>();

/**
 * The outbound clusters of every service in the proxy's scope, shared by the proxies of the push that
 * read them alike: serviceClusters reads the proxy's type and IP families, its endpoint view for DNS
 * services, and its labels where a DestinationRule selects workloads.
 */
function outboundClusters(
  push: MeshPush,
  proxy: ProxyNode,
  view: ProxyClusterView,
  endpoints: EndpointLookup,
): cluster.Cluster[] {
  const traits = scopeTraits(view.scope);
  const key = [
    proxy.type,
    view.ipFamilies,
    traits.inlineEndpoints ? view.endpointView : "",
    labelValuesKey(proxy.labels, traits.selectorLabels),
  ].join("|");
  return outboundClasses(push, endpoints, view.scope, key, () => {
    const clusters: cluster.Cluster[] = [];
    for (const s of view.scope.services) clusters.push(...serviceClusters(push, proxy, view, endpoints, s, false));
    return clusters;
  });
}

const inboundCache = resourceCache<cluster.Cluster>(TypeUrl.Cluster, (c) => [{ name: c.name, resource: c }]);

/**
 * Inbound clusters of a sidecar: one per inbound target port, with every service declaring it; shared
 * by the sidecars of a workload (they read the proxy's type and IP families).
 */
function inboundClusters(push: MeshPush, proxy: ProxyNode): cluster.Cluster[] {
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
    const key = [targetPort, JSON.stringify(port), JSON.stringify(endpoint), proxy.type, ipFamilies(proxy)].join("|");
    return inboundCache(push, key, [snap.mesh, rule, sidecarConnectionPool, ...services], () =>
      buildInboundCluster({
        targetPort,
        port,
        services,
        proxy,
        mesh: snap.mesh,
        destinationRule: rule && appliedRule(rule),
        sidecarConnectionPool,
        endpoint,
      }),
    );
  });
}

const specialCache = resourceCache<SpecialClusters>(TypeUrl.Cluster, (special) =>
  [...special.beforeInbound, ...special.afterInbound].map((c) => ({ name: c.name, resource: c })),
);

/** BlackHoleCluster, PassthroughCluster, ...: shared by the proxies of a type and IP families. */
function specialClusters(push: MeshPush, proxy: ProxyNode, allowAnyDynamicDns: boolean): SpecialClusters {
  const mesh = push.snapshot.mesh;
  const { INSTANCE_IPS, DNS_CAPTURE, DNS_PROXY_ADDR } = proxy.metadata;
  // AllowAnyDynamicDNSCluster's DNS cache reads the node's INSTANCE_IPS and DNS proxy.
  const dnsCache = allowAnyDynamicDns ? JSON.stringify([INSTANCE_IPS, DNS_CAPTURE, DNS_PROXY_ADDR]) : "";
  const key = [proxy.type, ipFamilies(proxy), dnsCache].join("|");
  return specialCache(push, key, [mesh], () => buildSpecialClusters({ proxy, mesh, allowAnyDynamicDns }));
}

interface AssembledClusters {
  clusters: readonly cluster.Cluster[];
  /** The duplicate clusters assembling dropped, reported again for each proxy getting the list. */
  duplicates: [PushMetric, string, string | undefined][];
}

// Per push, the assembled lists by their parts' identities: proxies with the same parts share one list.
const assembledLists = new WeakMap<MeshPush, Map<string, AssembledClusters>>();

/** assembleClusters, shared by the proxies of the push whose parts are the same objects. */
function assembledClusters(
  push: MeshPush,
  proxy: ProxyNode,
  parts: Pick<ProxyClusters, "outbound" | "inbound" | "sniDnat"> & { special: SpecialClusters },
): readonly cluster.Cluster[] {
  let lists = assembledLists.get(push);
  if (!lists) {
    lists = new Map();
    assembledLists.set(push, lists);
  }
  const { outbound, special, inbound = [], sniDnat = [] } = parts;
  // The proxy type says which of inbound and sniDnat the parts hold.
  const key = [proxy.type, objectId(outbound), objectId(special), ...inbound.map(objectId), ...sniDnat.map(objectId)];
  let assembled = lists.get(key.join(","));
  if (!assembled) {
    const duplicates: AssembledClusters["duplicates"] = [];
    const mesh = push.snapshot.mesh;
    const report = (metric: PushMetric, name: string, message?: string) => duplicates.push([metric, name, message]);
    assembled = { clusters: assembleClusters({ proxy, mesh, ...parts, report }), duplicates };
    lists.set(key.join(","), assembled);
  }
  const report = push.status.reporter(proxy.id);
  for (const [metric, name, message] of assembled.duplicates) report(metric, name, message);
  return assembled.clusters;
}

/**
 * Every cluster of the proxy, in Istio's order, with its EnvoyFilter patches applied last. Proxies of a
 * push with the same clusters and no cluster patches share the list.
 */
export function buildClusters(push: MeshPush, proxy: ProxyNode, endpoints: EndpointLookup): readonly cluster.Cluster[] {
  const snap = push.snapshot;
  const patches = patchSetFor(snap.envoyFiltersFor(proxy), proxy);
  const view = proxyClusterView(push, proxy);
  const outbound = outboundClusters(push, proxy, view, endpoints);
  if (proxy.type === "sidecar") {
    const allowAnyDynamicDns = view.scope.outboundTrafficPolicy.mode === "ALLOW_ANY_DYNAMIC_DNS";
    const clusters = assembledClusters(push, proxy, {
      outbound,
      inbound: inboundClusters(push, proxy),
      special: specialClusters(push, proxy, allowAnyDynamicDns),
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
    .flatMap((s) => serviceClusters(push, proxy, view, endpoints, s, true));
  const clusters = assembledClusters(push, proxy, { outbound, sniDnat, special: specialClusters(push, proxy, false) });
  return patches.has("CLUSTER") ? patchGeneratedClusters(patches, clusters, true) : clusters;
}

/** The port of an `inbound|port||` cluster; 0 for other names. */
function inboundPort(name: string): number {
  const parsed = parseClusterName(name);
  return parsed?.direction === "inbound" ? parsed.port : 0;
}

// The response resources of each cluster list (a shared list gives every proxy the same resources
// array), made of one resource per cluster object whatever lists hold it.
const listResources = new WeakMap<readonly cluster.Cluster[], XdsResource[]>();
const clusterResourceOf = new WeakMap<cluster.Cluster, XdsResource>();

function clusterResources(clusters: readonly cluster.Cluster[]): XdsResource[] {
  let resources = listResources.get(clusters);
  if (!resources) {
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
export function cdsGenerator(endpoints: EndpointLookup): Generator<PushSnapshot> {
  return {
    generate(proxy, _watched, req) {
      const autoPassthrough = () => (req.push.snapshot.mergedGateway(proxy)?.autoPassthroughSniHosts.size ?? 0) > 0;
      if (!cdsNeedsPush(req, proxy, autoPassthrough)) return undefined;
      return { resources: clusterResources(buildClusters(req.push, proxy, endpoints)) };
    },
  };
}
