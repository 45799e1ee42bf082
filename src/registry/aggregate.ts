// The aggregate view over every registry: one service per hostname and namespace, and the endpoints of
// each of its ports drawn from every registry, as Istio's aggregate controller and PushContext
// (initServiceRegistry, EndpointShards.CopyEndpoints) combine them.
//
// Which service stands for a hostname in a namespace: a Kubernetes Service over any ServiceEntry (so
// an entry cannot squat on a name before its Service exists), otherwise the oldest ServiceEntry
// (creationTimestamp, then object name). Endpoints are merged across registries, as Istio merges
// endpoint shards, and matched to the chosen service's ports by port number.
//
// Both are "group by" collections: each member of a group (a registry's service, a registry's
// endpoint list) computes its whole group's result under the group's key, reading the group through
// an index, so a change recomputes the members of one group only.
import type { Collection, CollectionOptions, DebugRegistry, Index } from "../krt/index.ts";
import { derive, deriveMany } from "../krt/index.ts";
import type { PortEndpoints, RegistryEndpoints, Service } from "./model.ts";
import { hostKey } from "./model.ts";

function byNamespaceHost<T extends { namespace: string; hostname: string }>(collection: Collection<T>): Index<T> {
  return collection.addIndex(`${collection.name}/by-host`, (item) => [hostKey(item.namespace, item.hostname)]);
}

function precedes(a: Service, b: Service): number {
  if (a.registry !== b.registry) return a.registry === "Kubernetes" ? -1 : 1;
  if (a.creationTime !== b.creationTime) return a.creationTime < b.creationTime ? -1 : 1;
  return a.objectName.localeCompare(b.objectName);
}

export function aggregateServices(
  services: Collection<Service>,
  debug: DebugRegistry | undefined,
): Collection<Service> {
  const group = byNamespaceHost(services);
  return derive(
    services,
    (ctx, service) => ctx.fetchIndex(group, hostKey(service.namespace, service.hostname)).sort(precedes)[0],
    { name: "registry/services", keyOf: (s) => hostKey(s.namespace, s.hostname), debug },
  );
}

/** Kubernetes endpoint lists first, then ServiceEntries' by key, so merged lists have a stable order. */
function registryOrder(a: RegistryEndpoints, b: RegistryEndpoints): number {
  const aKube = a.key.startsWith("Kubernetes/");
  const bKube = b.key.startsWith("Kubernetes/");
  if (aKube !== bKube) return aKube ? -1 : 1;
  return a.key.localeCompare(b.key);
}

export function portEndpointsKey(namespace: string, hostname: string, port: number): string {
  return `${namespace}/${hostname}/${port}`;
}

export function aggregateEndpoints(
  endpoints: Collection<RegistryEndpoints>,
  services: Collection<Service>,
  debug: DebugRegistry | undefined,
): Collection<PortEndpoints> {
  const group = byNamespaceHost(endpoints);
  const options: CollectionOptions<PortEndpoints> = {
    name: "registry/endpoints",
    keyOf: (e) => portEndpointsKey(e.namespace, e.hostname, e.port),
    debug,
  };
  return deriveMany(
    endpoints,
    (ctx, member) => {
      const key = hostKey(member.namespace, member.hostname);
      const service = ctx.fetch(services, { key })[0];
      if (!service) return [];
      const lists = ctx.fetchIndex(group, key).sort(registryOrder);
      return service.ports.map((port) => ({
        hostname: service.hostname,
        namespace: service.namespace,
        port: port.port,
        endpoints: lists.flatMap((list) => list.endpoints.filter((e) => e.servicePort === port.port)),
      }));
    },
    options,
  );
}
