// The aggregate view over every registry: one service per hostname and namespace, and the endpoints of
// each of its ports drawn from every registry, as Istio's aggregate controller and PushContext
// (initServiceRegistry, EndpointShards.CopyEndpoints) combine them.
//
// Which service stands for a hostname in a namespace: a Kubernetes Service over any ServiceEntry (so
// an entry cannot squat on a name before its Service exists), the config cluster's over a remote
// cluster's (Istio's aggregate lists the config cluster's registry first; remote ones here by cluster
// ID), otherwise the oldest ServiceEntry (creationTimestamp, then object name). Endpoints are merged across registries, as Istio merges
// endpoint shards, and matched to the chosen service's ports by port number; a DNS_ROUND_ROBIN entry
// adds an endpoint to a port only while the port has none.
//
// Both are "group by" collections: each member of a group (a registry's service, a registry's
// endpoint list) computes its whole group's result under the group's key, reading the group through
// an index, so a change recomputes the members of one group only.
import type { Collection, CollectionOptions, DebugRegistry, FetchContext, Index } from "../krt/index.ts";
import { derive, deriveMany } from "../krt/index.ts";
import { NameMemo } from "../util/index.ts";
import type { PortEndpoints, RegistryEndpoints, Service, ServiceEndpoint } from "./model.ts";
import { hostKey, registryKey } from "./model.ts";

function byNamespaceHost<T extends { namespace: string; hostname: string }>(collection: Collection<T>): Index<T> {
  return collection.addIndex(`${collection.name}/by-host`, (item) => [hostKey(item.namespace, item.hostname)]);
}

function precedence(configCluster: string): (a: Service, b: Service) => number {
  return (a, b) => {
    if (a.registry !== b.registry) return a.registry === "Kubernetes" ? -1 : 1;
    if (a.clusterId !== b.clusterId) {
      if (a.clusterId === configCluster || b.clusterId === configCluster) return a.clusterId === configCluster ? -1 : 1;
      return a.clusterId < b.clusterId ? -1 : 1;
    }
    return byAge(a, b);
  };
}

function byAge(a: Service, b: Service): number {
  if (a.creationTime !== b.creationTime) return a.creationTime < b.creationTime ? -1 : 1;
  return a.objectName.localeCompare(b.objectName);
}

/** The key of a service port's endpoints, `<namespace>/<hostname>/<port>`. */
export type PortEndpointsKey = (namespace: string, hostname: string, port: number) => string;

/**
 * The aggregate services and port endpoints over every registry's services and endpoint lists, and the
 * key of a port's endpoints (generators look a service port's endpoints up per cluster and listener: the
 * aggregate keeps its keys, one string each).
 */
export function aggregate(
  services: Collection<Service>,
  endpoints: Collection<RegistryEndpoints>,
  configCluster: string,
  debug: DebugRegistry | undefined,
): { services: Collection<Service>; endpoints: Collection<PortEndpoints>; portEndpointsKey: PortEndpointsKey } {
  const portKeys = new NameMemo((hostname, namespace, port) => `${namespace}/${hostname}/${port}`);
  const portEndpointsKey: PortEndpointsKey = (namespace, hostname, port) => portKeys.get(hostname, namespace, port);
  const servicesByHost = byNamespaceHost(services);
  const endpointsByHost = byNamespaceHost(endpoints);
  /** The group's services, the one that stands for it first. */
  const precedes = precedence(configCluster);
  const contenders = (ctx: FetchContext, key: string) => ctx.fetchIndex(servicesByHost, key).sort(precedes);

  const aggregateServices = derive(
    services,
    (ctx, service) => contenders(ctx, hostKey(service.namespace, service.hostname))[0],
    {
      name: "registry/services",
      keyOf: (s) => hostKey(s.namespace, s.hostname),
      debug,
    },
  );
  const options: CollectionOptions<PortEndpoints> = {
    name: "registry/endpoints",
    keyOf: (e) => portEndpointsKey(e.namespace, e.hostname, e.port),
    debug,
  };
  const aggregateEndpoints = deriveMany(
    endpoints,
    (ctx, member) => {
      const key = hostKey(member.namespace, member.hostname);
      const group = contenders(ctx, key);
      const service = group[0];
      if (!service) return [];
      const ordered = group.map(registryKey);
      // Lists in the order of their services, so a merged list is stable.
      const lists = ctx
        .fetchIndex(endpointsByHost, key)
        .sort((a, b) => ordered.indexOf(a.key) - ordered.indexOf(b.key));
      return service.ports.map((port) => {
        const merged: ServiceEndpoint[] = [];
        for (const list of lists) {
          const roundRobin = group[ordered.indexOf(list.key)]?.resolution === "DNSRoundRobinLB";
          for (const endpoint of list.endpoints) {
            if (endpoint.servicePort !== port.port) continue;
            // A DNS round-robin cluster takes one address: the first one a port gets, as in Istio.
            if (roundRobin && merged.length > 0) break;
            merged.push(endpoint);
          }
        }
        return { hostname: service.hostname, namespace: service.namespace, port: port.port, endpoints: merged };
      });
    },
    options,
  );
  return { services: aggregateServices, endpoints: aggregateEndpoints, portEndpointsKey };
}
