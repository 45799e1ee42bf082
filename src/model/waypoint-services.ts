// The services a waypoint proxy serves (Istio's findWaypointResources and WaypointKeyForProxy): a
// waypoint is known by the services that select its pods (the Service made for its Gateway), and the
// ambient index says which services name those hostnames or addresses as their waypoint.
import type { WaypointKey } from "../ambient/index.ts";
import type { Service } from "../registry/index.ts";
import type { ServiceTarget } from "./gateway-select.ts";
import type { ProxyNode } from "./proxy.ts";
import type { WaypointIndex } from "./push-inputs.ts";
import { compareServices } from "./service-index.ts";

export const LABEL_GATEWAY_MANAGED = "gateway.istio.io/managed";
/** The controller of the waypoints Istio deploys. */
export const MESH_CONTROLLER = "istio.io-mesh-controller";
/** The tunnels a workload takes besides plain traffic (`http`: HBONE). */
export const LABEL_TUNNEL = "networking.istio.io/tunnel";

/** The waypoint a proxy is: its namespace and network, the hostnames and VIPs of its services. */
export function waypointKeyForProxy(
  proxy: Pick<ProxyNode, "configNamespace" | "metadata">,
  targets: readonly ServiceTarget[],
): WaypointKey {
  const hostnames: string[] = [];
  const addresses: string[] = [];
  for (const { service } of targets) {
    hostnames.push(service.hostname);
    // An allocated address stands for the service's (unspecified) VIP.
    const allocated = service.autoAllocatedAddresses ?? [];
    addresses.push(...(allocated.length > 0 ? allocated : service.addresses));
  }
  return { namespace: proxy.configNamespace, network: proxy.metadata.NETWORK ?? "", hostnames, addresses };
}

/**
 * The registry's service for each service the index binds to the waypoint, oldest first. A
 * MESH_INTERNAL DYNAMIC_DNS entry is left out: only mesh-external ones may resolve per request.
 */
export function waypointServices(
  index: WaypointIndex,
  key: WaypointKey,
  service: (hostname: string, namespace: string) => Service | undefined,
): Service[] {
  const services = new Map<string, Service>();
  for (const info of index.servicesForWaypoint(key)) {
    const found = service(info.service.hostname, info.service.namespace);
    if (!found || (found.resolution === "DynamicDNS" && !found.meshExternal)) continue;
    services.set(found.hostname, found);
  }
  return [...services.values()].sort(compareServices);
}
