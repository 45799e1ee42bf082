// The ClusterLoadAssignment of one cluster (Istio's EndpointBuilder): the service port's endpoints,
// filtered by subset labels and health, made network-aware, grouped by locality with failover
// priorities or distribute weights. DNS clusters carry the same groups inline (`localityGroups`).
import type { endpoint } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { DestinationRuleTrafficPolicy } from "../../config/types/index.ts";
import type { Labels } from "../../krt/index.ts";
import type { NetworkGateways, ProxyNode } from "../../model/index.ts";
import type { ServiceEndpoint } from "../../registry/index.ts";
import { type Memos, NO_MEMOS } from "../../util/index.ts";
import { buildLbEndpoint } from "./lbendpoint.ts";
import { applyLocalityLb, groupByLocality, localityLbEndpoints, localityLbSetting, parseLocality } from "./locality.ts";
import { networkMembers } from "./network.ts";
import { selectEndpoints } from "./subset-filter.ts";

export interface EndpointsInput {
  /** The cluster (and EDS resource) name, e.g. `outbound|9080|v1|reviews.default.svc.cluster.local`. */
  clusterName: string;
  /** The service port the cluster is for. */
  port: number;
  /** The endpoints of the service (endpoints of other ports are ignored). */
  endpoints: readonly ServiceEndpoint[];
  /** The subset's labels, for a subset cluster. */
  subsetLabels?: Labels;
  proxy: ProxyNode;
  mesh: MeshConfig;
  /** The DestinationRule traffic policy of this cluster (port and subset merged, as effectiveTrafficPolicy gives). */
  policy?: DestinationRuleTrafficPolicy;
  /** PeerAuthentication turns mTLS off for this endpoint's workload (Istio's mtlsChecker). */
  peerAuthenticationDisabled?: (ep: ServiceEndpoint) => boolean;
  /** Network gateways for multi-network meshes; endpoints on other networks are reached through them. */
  networkGateways?: NetworkGateways;
  includeUnhealthy?: boolean;
  includeDraining?: boolean;
  /** The service is cluster-local (mesh serviceSettings): only endpoints in the proxy's cluster. */
  clusterLocal?: boolean;
  /** The endpoints go inline in a DNS cluster: failoverPriority labels do not apply there (as in Istio). */
  inline?: boolean;
  /** A waypoint's inbound VIP cluster: the endpoints that take HBONE are reached through connect_originate. */
  tunnel?: (ep: ServiceEndpoint) => boolean;
  /** SNI-DNAT clusters (gateway AUTO_PASSTHROUGH) keep only endpoints that terminate Istio mTLS. */
  mtlsCapableOnly?: boolean;
  /** Where the builders keep what they memoise (the xDS cache's tables); without it nothing is kept. */
  memos?: Memos;
}

export function buildClusterLoadAssignment(input: EndpointsInput): endpoint.ClusterLoadAssignment {
  return {
    $typeName: "envoy.config.endpoint.v3.ClusterLoadAssignment",
    clusterName: input.clusterName,
    endpoints: localityGroups(input),
    namedEndpoints: {},
  };
}

/** The LocalityLbEndpoints of the cluster; empty when no endpoint is selected. */
export function localityGroups(input: EndpointsInput): endpoint.LocalityLbEndpoints[] {
  const ruleTlsDisablesMtls = input.policy?.tls?.mode !== undefined && input.policy.tls.mode !== "ISTIO_MUTUAL";
  const mtlsDisabled = (ep: ServiceEndpoint) =>
    ruleTlsDisablesMtls || (input.peerAuthenticationDisabled?.(ep) ?? false);
  const proxyNetwork = input.proxy.metadata.NETWORK ?? "";
  // REQUESTED_NETWORK_VIEW limits the proxy to those networks (and endpoints with none).
  const view = input.proxy.metadata.REQUESTED_NETWORK_VIEW ?? [];
  const visible = (ep: ServiceEndpoint) => view.length === 0 || ep.network === "" || view.includes(ep.network);
  // Istio sends not-ready endpoints as UNHEALTHY (PILOT_AUTO_SEND_UNHEALTHY_ENDPOINTS) unless outlier
  // detection keeps a minimum healthy percentage (supportsUnhealthyEndpoints).
  const includeUnhealthy = input.includeUnhealthy ?? !((input.policy?.outlierDetection?.minHealthPercent ?? 0) > 0);
  const selected = selectEndpoints(input.endpoints, {
    port: input.port,
    subsetLabels: input.subsetLabels,
    includeUnhealthy,
    includeDraining: input.includeDraining,
  }).filter(
    (ep) =>
      visible(ep) &&
      (!input.clusterLocal || ep.clusterId === input.proxy.clusterId) &&
      // An endpoint without an address can only be reached through its network's gateway.
      (ep.address !== "" || ep.network !== proxyNetwork),
  );
  if (selected.length === 0) return [];
  const kept = input.mtlsCapableOnly ? selected.filter((ep) => ep.tlsMode === "istio" && !mtlsDisabled(ep)) : selected;

  const byLocality = new Map<string, ServiceEndpoint[]>();
  for (const ep of kept) {
    const list = byLocality.get(ep.locality);
    if (list) list.push(ep);
    else byLocality.set(ep.locality, [ep]);
  }
  const memos = input.memos ?? NO_MEMOS;
  const tunnel = input.tunnel;
  const build = (ep: ServiceEndpoint, weight: number) =>
    buildLbEndpoint(memos, ep, !mtlsDisabled(ep), weight, tunnel?.(ep) ?? false);
  const items = [...byLocality].flatMap(([locality, eps]) =>
    networkMembers(eps, build, {
      proxyNetwork,
      proxyClusterId: input.proxy.clusterId,
      gateways: input.networkGateways,
      mtlsDisabled,
    }).map((member) => ({ locality, member })),
  );
  const groups = applyLocalityLb(groupByLocality(items), {
    setting: localityLbSetting(input.mesh, input.policy?.loadBalancer?.localityLbSetting),
    outlierDetection: input.policy?.outlierDetection !== undefined,
    proxyLocality: input.proxy.locality,
    proxyLabels: input.proxy.labels,
    skipFailoverPriority: input.inline,
  });
  if (input.mtlsCapableOnly) {
    // Istio drops the endpoints without mTLS after grouping them (EndpointsWithMTLSFilter): a locality
    // left without any stays, empty and without weight.
    const present = new Set(kept.map((ep) => ep.locality));
    const emptied = [...new Set(selected.map((ep) => ep.locality))].filter((l) => !present.has(l));
    for (const label of emptied)
      groups.push({ locality: parseLocality(label), members: [], weight: undefined, priority: 0 });
    groups.sort((a, b) => localityLabel(a.locality).localeCompare(localityLabel(b.locality)));
  }
  return localityLbEndpoints(groups);
}

const localityLabel = (l: { region: string; zone: string; subZone: string }) => `${l.region}/${l.zone}/${l.subZone}`;
