// CDS: a proxy's clusters (Istio's pilot/pkg/xds/cds.go → configgen BuildClusters): the outbound
// clusters of every service its scope sees, with the DestinationRule for the host; sidecars add the
// inbound clusters of their service ports, routers the SNI-DNAT clusters of AUTO_PASSTHROUGH hosts.
import type { cluster } from "../../api/index.ts";
import type { ConsolidatedDestinationRule, ProxyNode, PushContext } from "../../model/index.ts";
import { hostsMatch, pushSnapshot } from "../../model/index.ts";
import {
  type AppliedDestinationRule,
  assembleClusters,
  buildInboundCluster,
  buildOutboundClusters,
  buildSniDnatClusters,
  type IstioTlsContextCache,
  parseClusterName,
} from "../../networking/cluster/index.ts";
import { patchGeneratedClusters, patchSetFor } from "../../networking/envoyfilter/index.ts";
import type { Service } from "../../registry/index.ts";
import type { Generator } from "../generator.ts";
import { TypeUrl } from "../types.ts";
import { cdsNeedsPush } from "./cds-needs-push.ts";
import type { EndpointLookup } from "./eds.ts";
import { type InboundTarget, sidecarInboundTargets } from "./lds.ts";
import { perPush } from "./push-cache.ts";

/** The builders' view of a consolidated DestinationRule. */
export function appliedRule(rule: ConsolidatedDestinationRule): AppliedDestinationRule {
  return {
    name: rule.rule.metadata.name ?? "",
    namespace: rule.rule.metadata.namespace ?? "",
    spec: rule.rule.spec ?? { host: "" },
  };
}

/**
 * What of the proxy endpoint selection reads (cluster, network and its view, locality, labels for
 * failover priority): load assignments, and DNS clusters with their inline endpoints, depend on it.
 */
export function endpointViewKey(proxy: ProxyNode): string {
  const { region, zone, subZone } = proxy.locality;
  return [
    proxy.clusterId,
    proxy.metadata.NETWORK,
    proxy.metadata.REQUESTED_NETWORK_VIEW?.join(","),
    `${region}/${zone}/${subZone}`,
    JSON.stringify(proxy.labels),
  ].join("|");
}

const outboundCache = perPush<cluster.Cluster[]>(TypeUrl.Cluster, (clusters) =>
  clusters.map((c) => ({ name: c.name, resource: c })),
);

// One per push (it holds no resources): the clusters of a push share their encoded Istio mTLS contexts.
const istioTlsContexts = perPush<IstioTlsContextCache>(TypeUrl.Cluster, () => []);

function ipFamilies(proxy: ProxyNode): string {
  return [...new Set(proxy.ipAddresses.map((ip) => (ip.includes(":") ? "6" : "4")))].sort().join("");
}

/** Outbound (or SNI-DNAT) clusters of one service, shared by the proxies that see it through the same rule. */
function serviceClusters(
  push: PushContext,
  proxy: ProxyNode,
  endpoints: EndpointLookup,
  service: Service,
  sniDnat: boolean,
): cluster.Cluster[] {
  const snap = pushSnapshot(push);
  const rule = snap.sidecarScope(proxy).destinationRule("outbound", proxy.labels, service.hostname);
  // Istio infers the service's mTLS mode from the namespace-wide PeerAuthentication.
  const serviceMtlsMode = snap.effectiveMtls({ configNamespace: service.namespace, labels: {} }).mode;
  const key = [
    sniDnat ? "sni" : "out",
    proxy.type,
    ipFamilies(proxy),
    endpointViewKey(proxy),
    service.namespace,
    service.hostname,
    rule?.from.join(",") ?? "",
    serviceMtlsMode,
  ].join("|");
  return outboundCache(push, key, () =>
    service.ports.flatMap((port) => {
      const input = {
        service,
        port,
        destinationRule: rule && appliedRule(rule),
        proxy,
        mesh: snap.mesh,
        endpoints: endpoints.endpointsFor(service.hostname, port.port, service.namespace),
        serviceMtlsMode,
        redisFilter: snap.protocolFilters.redis,
        istioTlsContexts: istioTlsContexts(push, "", () => new Map()),
        report: push.status.reporter(proxy.id),
      };
      return sniDnat ? buildSniDnatClusters(input) : buildOutboundClusters(input);
    }),
  );
}

/** Inbound clusters of a sidecar: one per inbound target port, with every service declaring it. */
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
    return buildInboundCluster({
      targetPort,
      port,
      services,
      proxy,
      mesh: snap.mesh,
      destinationRule: rule && appliedRule(rule),
      sidecarConnectionPool: scope.inboundConnectionPool(targetPort),
      endpoint,
    });
  });
}

/** Every cluster of the proxy, in Istio's order, with its EnvoyFilter patches applied last. */
export function buildClusters(push: PushContext, proxy: ProxyNode, endpoints: EndpointLookup): cluster.Cluster[] {
  const snap = pushSnapshot(push);
  const patches = patchSetFor(snap.envoyFiltersFor(proxy), proxy);
  const services = snap.sidecarScope(proxy).services;
  const outbound = services.flatMap((s) => serviceClusters(push, proxy, endpoints, s, false));
  if (proxy.type === "sidecar") {
    const clusters = assembleClusters({
      proxy,
      mesh: snap.mesh,
      outbound,
      inbound: inboundClusters(push, proxy),
      allowAnyDynamicDns: snap.sidecarScope(proxy).outboundTrafficPolicy.mode === "ALLOW_ANY_DYNAMIC_DNS",
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
    .flatMap((s) => serviceClusters(push, proxy, endpoints, s, true));
  return patchGeneratedClusters(
    patches,
    assembleClusters({ proxy, mesh: snap.mesh, outbound, sniDnat, report: push.status.reporter(proxy.id) }),
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
