// Multi-network endpoints (Istio's EndpointsByNetworkFilter): endpoints on the proxy's network are sent
// as they are; endpoints on another network are reached through that network's gateways, which stand in
// for them with their combined weight. Weights are scaled by the least common multiple of the gateway
// counts so that each gateway's share stays a whole number.
import type { ServiceEndpoint } from "../../registry/index.ts";
import { endpointAddress, endpointMetadata, endpointWeight, type LbEndpointInit } from "./lbendpoint.ts";
import type { GroupMember } from "./locality.ts";

/** A network's gateway, as meshNetworks or the registry's gateway services declare it. */
export interface NetworkGateway {
  address: string;
  port: number;
  /** The cluster the gateway is in (the istio.workload metadata). */
  clusterId?: string;
}

/** Gateways by network name. Multi-network routing is on only when some network has one. */
export type NetworkGateways = Readonly<Record<string, readonly NetworkGateway[]>>;

export interface NetworkView {
  proxyNetwork: string;
  gateways: NetworkGateways | undefined;
  /** mTLS to this endpoint is off: it cannot be reached through a gateway (which routes by mTLS SNI). */
  mtlsDisabled: (ep: ServiceEndpoint) => boolean;
}

export function multiNetworkEnabled(gateways: NetworkGateways | undefined): boolean {
  return gateways !== undefined && Object.values(gateways).some((list) => list.length > 0);
}

/** The members of one locality for a proxy on `view.proxyNetwork`. */
export function networkMembers(
  endpoints: readonly ServiceEndpoint[],
  build: (ep: ServiceEndpoint) => LbEndpointInit,
  view: NetworkView,
): GroupMember[] {
  if (!multiNetworkEnabled(view.gateways)) {
    return endpoints.map((ep) => ({ lb: build(ep), weight: endpointWeight(ep), labels: ep.labels }));
  }
  const gateways = view.gateways ?? {};
  const scale = Object.values(gateways)
    .map((list) => list.length)
    .filter((n) => n > 0)
    .reduce(lcm, 1);
  const members: GroupMember[] = [];
  const remoteWeights = new Map<string, number>();
  for (const ep of endpoints) {
    if (ep.network === view.proxyNetwork) {
      const weight = endpointWeight(ep) * scale;
      members.push({ lb: { ...build(ep), loadBalancingWeight: weight }, weight, labels: ep.labels });
      continue;
    }
    if (view.mtlsDisabled(ep) || (gateways[ep.network]?.length ?? 0) === 0) continue;
    remoteWeights.set(ep.network, (remoteWeights.get(ep.network) ?? 0) + endpointWeight(ep));
  }
  for (const network of [...remoteWeights.keys()].sort()) {
    const list = gateways[network] ?? [];
    const weight = ((remoteWeights.get(network) ?? 0) * scale) / list.length;
    for (const gw of list) members.push({ lb: gatewayLbEndpoint(gw, weight), weight, labels: {} });
  }
  return members;
}

function gatewayLbEndpoint(gw: NetworkGateway, weight: number): LbEndpointInit {
  return {
    hostIdentifier: { case: "endpoint", value: { address: endpointAddress(gw.address, gw.port) } },
    loadBalancingWeight: weight,
    metadata: {
      filterMetadata: endpointMetadata({
        tlsMode: "istio",
        workloadName: "",
        namespace: "",
        labels: {},
        clusterId: gw.clusterId ?? "",
      }),
    },
  };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

function lcm(a: number, b: number): number {
  return (a * b) / gcd(a, b);
}
