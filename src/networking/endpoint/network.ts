// Multi-network endpoints (Istio's EndpointsByNetworkFilter): endpoints on the proxy's network are sent
// as they are; endpoints on another network are reached through that network's gateways, which stand in
// for them with their combined weight; endpoints on a network without gateways are taken as directly
// reachable. Weights are scaled by the least common multiple of the gateway counts (per network and
// per network and cluster) so that each gateway's share stays a whole number.

import type { endpoint } from "../../api/index.ts";
import type { NetworkGateway, NetworkGateways } from "../../model/index.ts";
import type { ServiceEndpoint } from "../../registry/index.ts";
import { endpointAddress, endpointMetadata, endpointWeight, lbEndpoint, workloadTelemetry } from "./lbendpoint.ts";
import type { GroupMember } from "./locality.ts";

export interface NetworkView {
  proxyNetwork: string;
  gateways: NetworkGateways | undefined;
  proxyClusterId: string;
  /** mTLS to this endpoint is off: it cannot be reached through a gateway (which routes by mTLS SNI). */
  mtlsDisabled: (ep: ServiceEndpoint) => boolean;
}

export function multiNetworkEnabled(gateways: NetworkGateways | undefined): boolean {
  return gateways !== undefined && Object.values(gateways).some((list) => list.length > 0);
}

/** The members of one locality for a proxy on `view.proxyNetwork`. */
export function networkMembers(
  endpoints: readonly ServiceEndpoint[],
  build: (ep: ServiceEndpoint, weight: number) => endpoint.LbEndpoint,
  view: NetworkView,
): GroupMember[] {
  if (!multiNetworkEnabled(view.gateways)) {
    return endpoints.map((ep) => {
      const weight = endpointWeight(ep);
      return { lb: build(ep, weight), weight, labels: ep.labels };
    });
  }
  const gateways = view.gateways ?? {};
  const scale = Object.values(gateways)
    .flatMap((list) => [list.length, ...gatewaysPerCluster(list)])
    .filter((n) => n > 0)
    .reduce(lcm, 1);
  const members: GroupMember[] = [];
  const gatewayWeights = new Map<NetworkGateway, number>();
  for (const ep of endpoints) {
    const weight = endpointWeight(ep) * scale;
    const epGateways = gatewaysFor(gateways, ep);
    // Reachable directly: on the proxy's network, or on a network without gateways.
    if (ep.network === view.proxyNetwork || epGateways.length === 0) {
      members.push({ lb: build(ep, weight), weight, labels: ep.labels });
      continue;
    }
    // Gateways route by the mTLS SNI: an endpoint without Istio mTLS cannot be reached through one.
    if (ep.tlsMode !== "istio" || view.mtlsDisabled(ep)) continue;
    const share = Math.floor(weight / epGateways.length);
    for (const gw of epGateways) gatewayWeights.set(gw, (gatewayWeights.get(gw) ?? 0) + share);
  }
  for (const gw of [...gatewayWeights.keys()].sort(compareGateways)) {
    const weight = gatewayWeights.get(gw) || 1;
    members.push({ lb: gatewayLbEndpoint(gw, weight, view.proxyClusterId), weight, labels: {} });
  }
  return members;
}

/** The endpoint's network gateways in its own cluster, else all of its network's. */
function gatewaysFor(gateways: NetworkGateways, ep: ServiceEndpoint): readonly NetworkGateway[] {
  const all = gateways[ep.network] ?? [];
  const sameCluster = all.filter((gw) => gw.clusterId !== undefined && gw.clusterId === ep.clusterId);
  return sameCluster.length > 0 ? sameCluster : all;
}

/** How many of the network's gateways each cluster has (gateways without one count together), as Istio's lcm reads them. */
function gatewaysPerCluster(list: readonly NetworkGateway[]): number[] {
  const counts = new Map<string, number>();
  for (const gw of list) counts.set(gw.clusterId ?? "", (counts.get(gw.clusterId ?? "") ?? 0) + 1);
  return [...counts.values()];
}

function compareGateways(a: NetworkGateway, b: NetworkGateway): number {
  return (a.clusterId ?? "").localeCompare(b.clusterId ?? "") || a.address.localeCompare(b.address) || a.port - b.port;
}

/** A gateway standing in for remote endpoints: Istio mTLS, telemetry naming only the proxy's cluster. */
function gatewayLbEndpoint(gw: NetworkGateway, weight: number, proxyClusterId: string): endpoint.LbEndpoint {
  const metadata = endpointMetadata("istio", workloadTelemetry("", "", {}, proxyClusterId));
  return lbEndpoint(endpointAddress(gw.address, gw.port), metadata, weight);
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

function lcm(a: number, b: number): number {
  return (a * b) / gcd(a, b);
}
