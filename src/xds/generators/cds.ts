// CDS: a proxy's clusters (Istio's pilot/pkg/xds/cds.go → configgen BuildClusters): the outbound
// clusters of every service its scope sees, with the DestinationRule for the host; sidecars add the
// inbound clusters of their service ports, routers the SNI-DNAT clusters of AUTO_PASSTHROUGH hosts.
import type { cluster } from "../../api/index.ts";
import type { ConsolidatedDestinationRule, MtlsMode, ProxyNode, PushContext, SidecarScope } from "../../model/index.ts";
import { hostsMatch, pushSnapshot } from "../../model/index.ts";
import {
  type AppliedDestinationRule,
  assembleClusters,
  buildInboundCluster,
  buildOutboundClusters,
  buildSniDnatClusters,
  buildSpecialClusters,
  type IstioTlsContextCache,
  parseClusterName,
  type SpecialClusters,
} from "../../networking/cluster/index.ts";
import { patchGeneratedClusters, patchSetFor } from "../../networking/envoyfilter/index.ts";
import type { Service } from "../../registry/index.ts";
import type { Generator } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { cdsNeedsPush } from "./cds-needs-push.ts";
import type { EndpointLookup } from "./eds.ts";
import { type InboundTarget, sidecarInboundTargets } from "./lds.ts";
import { resourceCache } from "./push-cache.ts";

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

const outboundCache = resourceCache<cluster.Cluster[]>(TypeUrl.Cluster, (clusters) =>
  clusters.map((c) => ({ name: c.name, resource: c })),
);

// The clusters built for a push share their encoded Istio mTLS contexts.
const istioTlsContexts = new WeakMap<PushContext, IstioTlsContextCache>();

function tlsContextsOf(push: PushContext): IstioTlsContextCache {
  let contexts = istioTlsContexts.get(push);
  if (!contexts) {
    contexts = new Map();
    istioTlsContexts.set(push, contexts);
  }
  return contexts;
}

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

function proxyClusterView(push: PushContext, proxy: ProxyNode): ProxyClusterView {
  const scope = pushSnapshot(push).sidecarScope(proxy);
  return { scope, ipFamilies: ipFamilies(proxy), endpointView: endpointViewKey(proxy), namespaceMtls: new Map() };
}

/**
 * Outbound (or SNI-DNAT) clusters of one service, shared by the proxies that see it through the same
 * rule: they read the proxy's type and IP families, and only DNS clusters (endpoints inline) its view
 * of endpoints (inline endpoints take no failoverPriority labels).
 */
function serviceClusters(
  push: PushContext,
  proxy: ProxyNode,
  view: ProxyClusterView,
  endpoints: EndpointLookup,
  service: Service,
  sniDnat: boolean,
): cluster.Cluster[] {
  const snap = pushSnapshot(push);
  const rule = view.scope.destinationRule("outbound", proxy.labels, service.hostname);
  // Istio infers the service's mTLS mode from the namespace-wide PeerAuthentication.
  const serviceMtlsMode =
    view.namespaceMtls.get(service.namespace) ??
    snap.effectiveMtls({ configNamespace: service.namespace, labels: {} }).mode;
  view.namespaceMtls.set(service.namespace, serviceMtlsMode);
  const inlineEndpoints = service.resolution === "DNSLB" || service.resolution === "DNSRoundRobinLB";
  const key = [
    sniDnat ? "sni" : "out",
    proxy.type,
    view.ipFamilies,
    inlineEndpoints ? view.endpointView : "",
    service.namespace,
    service.hostname,
    rule?.from.join(",") ?? "",
    serviceMtlsMode,
    snap.protocolFilters.redis,
  ].join("|");
  const portEndpoints = service.ports.map((port) =>
    endpoints.endpointsFor(service.hostname, port.port, service.namespace),
  );
  return outboundCache(push, key, [service, rule, snap.mesh, ...portEndpoints], (status) =>
    service.ports.flatMap((port, i) => {
      const input = {
        service,
        port,
        destinationRule: rule && appliedRule(rule),
        proxy,
        mesh: snap.mesh,
        endpoints: portEndpoints[i],
        serviceMtlsMode,
        redisFilter: snap.protocolFilters.redis,
        istioTlsContexts: tlsContextsOf(push),
        report: status.reporter(proxy.id),
      };
      return sniDnat ? buildSniDnatClusters(input) : buildOutboundClusters(input);
    }),
  );
}

const inboundCache = resourceCache<cluster.Cluster>(TypeUrl.Cluster, (c) => [{ name: c.name, resource: c }]);

/**
 * Inbound clusters of a sidecar: one per inbound target port, with every service declaring it; shared
 * by the sidecars of a workload (they read the proxy's type and IP families).
 */
function inboundClusters(push: PushContext, proxy: ProxyNode): cluster.Cluster[] {
  const snap = pushSnapshot(push);
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
function specialClusters(push: PushContext, proxy: ProxyNode, allowAnyDynamicDns: boolean): SpecialClusters {
  const mesh = pushSnapshot(push).mesh;
  const { INSTANCE_IPS, DNS_CAPTURE, DNS_PROXY_ADDR } = proxy.metadata;
  // AllowAnyDynamicDNSCluster's DNS cache reads the node's INSTANCE_IPS and DNS proxy.
  const dnsCache = allowAnyDynamicDns ? JSON.stringify([INSTANCE_IPS, DNS_CAPTURE, DNS_PROXY_ADDR]) : "";
  const key = [proxy.type, ipFamilies(proxy), dnsCache].join("|");
  return specialCache(push, key, [mesh], () => buildSpecialClusters({ proxy, mesh, allowAnyDynamicDns }));
}

/** Every cluster of the proxy, in Istio's order, with its EnvoyFilter patches applied last. */
export function buildClusters(push: PushContext, proxy: ProxyNode, endpoints: EndpointLookup): cluster.Cluster[] {
  const snap = pushSnapshot(push);
  const patches = patchSetFor(snap.envoyFiltersFor(proxy), proxy);
  const view = proxyClusterView(push, proxy);
  const services = view.scope.services;
  const outbound = services.flatMap((s) => serviceClusters(push, proxy, view, endpoints, s, false));
  if (proxy.type === "sidecar") {
    const allowAnyDynamicDns = view.scope.outboundTrafficPolicy.mode === "ALLOW_ANY_DYNAMIC_DNS";
    const clusters = assembleClusters({
      proxy,
      mesh: snap.mesh,
      outbound,
      inbound: inboundClusters(push, proxy),
      special: specialClusters(push, proxy, allowAnyDynamicDns),
      report: push.status.reporter(proxy.id),
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
  const sniDnat = services
    .filter((s) => sniHosts.some((h) => hostsMatch(h, s.hostname)))
    .flatMap((s) => serviceClusters(push, proxy, view, endpoints, s, true));
  return patchGeneratedClusters(
    patches,
    assembleClusters({
      proxy,
      mesh: snap.mesh,
      outbound,
      sniDnat,
      special: specialClusters(push, proxy, false),
      report: push.status.reporter(proxy.id),
    }),
    true,
  );
}

/** The port of an `inbound|port||` cluster; 0 for other names. */
function inboundPort(name: string): number {
  const parsed = parseClusterName(name);
  return parsed?.direction === "inbound" ? parsed.port : 0;
}

/** CDS is wildcard: every cluster, on pushes that may change clusters. */
export function cdsGenerator(endpoints: EndpointLookup): Generator {
  return {
    generate(proxy, _watched, req) {
      const autoPassthrough = () =>
        (pushSnapshot(req.push).mergedGateway(proxy)?.autoPassthroughSniHosts.size ?? 0) > 0;
      if (!cdsNeedsPush(req, proxy, autoPassthrough)) return undefined;
      return { resources: buildClusters(req.push, proxy, endpoints).map((c) => ({ name: c.name, resource: c })) };
    },
  };
}
