// The mesh's network gateways (Istio's NetworkManager with its kube registry's gateway discovery): the
// gateways meshNetworks gives by `address`; Services named by a meshNetworks `registryServiceName` of
// a network whose endpoints name this cluster `fromRegistry`; and Services labelled
// topology.istio.io/network, on the port of their networking.istio.io/gatewayPort label (default 15443)
// when they expose it. A Service gateway is reachable at each of its external addresses (load-balancer
// ingress, externalIPs). EDS sends only gateways with an IP address: Istio resolves host names in the
// control plane (RESOLVE_HOSTNAME_GATEWAYS), which Sluice does not, so those stay unresolved, as in
// Istio with that feature off.
import { isIP } from "node:net";
import type { MeshNetworks } from "../config/index.ts";
import type { Service } from "../registry/index.ts";
import { compareStrings } from "./config-meta.ts";

const LABEL_NETWORK = "topology.istio.io/network";
const LABEL_GATEWAY_PORT = "networking.istio.io/gatewayPort";
const DEFAULT_GATEWAY_PORT = 15443;

/** A network's gateway, as meshNetworks or the registry's gateway services declare it. */
export interface NetworkGateway {
  address: string;
  port: number;
  /** The cluster the gateway is in: endpoints of that cluster prefer it. */
  clusterId?: string;
}

/** Gateways by network name. Multi-network routing is on only when some network has one. */
export type NetworkGateways = Readonly<Record<string, readonly NetworkGateway[]>>;

/** One gateway of a network (Istio's model.NetworkGateway). */
export interface MeshNetworkGateway {
  network: string;
  /** The cluster the gateway is in; "" for meshNetworks addresses. */
  clusterId: string;
  /** An IP address or a host name. */
  address: string;
  port: number;
}

export interface NetworkGatewayInputs {
  meshNetworks?: MeshNetworks;
  /** The registry's services (Kubernetes Services are gateway candidates). */
  services: readonly Service[];
  /** The cluster the registry's Services are in. */
  clusterId: string;
}

/** Every gateway, host names included, without duplicates, ordered by address and port as Istio's SortGateways. */
export function discoverNetworkGateways(inputs: NetworkGatewayInputs): MeshNetworkGateway[] {
  const networks = Object.entries(inputs.meshNetworks?.networks ?? {});
  const found = new Map<string, MeshNetworkGateway>();
  const add = (gw: MeshNetworkGateway) => found.set(`${gw.network}|${gw.clusterId}|${gw.address}|${gw.port}`, gw);
  for (const [network, { gateways = [] }] of networks) {
    for (const gw of gateways) {
      if (gw.address) add({ network, clusterId: "", address: gw.address, port: gw.port ?? 0 });
    }
  }
  // registryServiceName gateways count only in networks this cluster's endpoints belong to.
  const byServiceName = new Map<string, { network: string; port: number }[]>();
  for (const [network, { endpoints = [], gateways = [] }] of networks) {
    if (!endpoints.some((e) => e.fromRegistry === inputs.clusterId)) continue;
    for (const gw of gateways) {
      if (!gw.registryServiceName) continue;
      const list = byServiceName.get(gw.registryServiceName) ?? [];
      list.push({ network, port: gw.port ?? 0 });
      byServiceName.set(gw.registryServiceName, list);
    }
  }
  for (const service of inputs.services) {
    if (service.registry !== "Kubernetes") continue;
    const gateways = labelledGateway(service) ?? byServiceName.get(service.hostname) ?? [];
    for (const address of service.externalAddresses) {
      for (const { network, port } of gateways) add({ network, clusterId: inputs.clusterId, address, port });
    }
  }
  return [...found.values()].sort(
    (a, b) =>
      compareStrings(a.address, b.address) ||
      a.port - b.port ||
      compareStrings(a.network, b.network) ||
      compareStrings(a.clusterId, b.clusterId),
  );
}

/**
 * A Service labelled with its network: the gateway of that network on its gateway port; none when the
 * Service does not expose that port (Istio's HBONE-only east-west gateways serve ambient, not sidecars).
 */
function labelledGateway(service: Service): { network: string; port: number }[] | undefined {
  const network = service.labels[LABEL_NETWORK];
  if (!network) return undefined;
  // An unparsable port label falls back to the default, as Istio does (with a warning).
  const label = service.labels[LABEL_GATEWAY_PORT] ?? "";
  const port = /^\d+$/.test(label) ? Number(label) : DEFAULT_GATEWAY_PORT;
  return service.ports.some((p) => p.port === port) ? [{ network, port }] : [];
}

/** The gateways with an IP address: those Envoy can be sent. */
export function resolvedGateways(gateways: readonly MeshNetworkGateway[]): MeshNetworkGateway[] {
  return gateways.filter((gw) => isIP(gw.address) !== 0);
}

/** The resolved gateways by network, as EDS reads them. */
export function gatewaysByNetwork(gateways: readonly MeshNetworkGateway[]): NetworkGateways {
  const out: Record<string, NetworkGateway[]> = {};
  for (const gw of resolvedGateways(gateways)) {
    const entry = { address: gw.address, port: gw.port, ...(gw.clusterId ? { clusterId: gw.clusterId } : {}) };
    const list = out[gw.network];
    if (list) list.push(entry);
    else out[gw.network] = [entry];
  }
  return out;
}
