// The conversion kept live over krt collections (Istio's gateway controller on its informers): one
// singleton recomputed when a Gateway API object, a cluster object the conversion reads, or a service
// it looked up changes. Pods, endpoints that do not change a service's ports, and Istio's own kinds
// never reach it. Statuses carry unstamped transition times (TRANSITION_TIME) so that recomputing an
// unchanged input gives an equal result; whoever writes a status stamps it then.
import type { ConfigObject } from "../config/index.ts";
import { type Collection, derive, type FetchContext, type Index, type Singleton, singleton } from "../krt/index.ts";
import type { PortEndpoints, Service } from "../registry/index.ts";
import { TRANSITION_TIME } from "./conditions.ts";
import { type ConversionResult, convertResources } from "./index.ts";
import type { ConversionSettings, RegistryService, ServiceEndpoint, ServiceLookup } from "./model.ts";

export interface LiveConversionInputs {
  /** One collection per Gateway API kind: with none of these objects there is nothing to convert. */
  gatewayApi: readonly Collection<ConfigObject>[];
  /** Cluster objects the conversion looks up (Services, Secrets, ConfigMaps, Namespaces, ServiceEntries). */
  cluster: readonly Collection<ConfigObject>[];
  /** The registry's services as the conversion sees them, by hostname (see registryServiceView). */
  servicesByHostname: Index<RegistryService>;
}

const NOTHING: ConversionResult = { config: [], statuses: [] };

/** The registry's service and its endpoints' distinct (service port, workload port) pairs. */
function toRegistryService(service: Service, endpoints: readonly PortEndpoints[]): RegistryService {
  const pairs = new Map<string, ServiceEndpoint>();
  for (const group of endpoints) {
    for (const endpoint of group.endpoints) {
      pairs.set(`${group.port}/${endpoint.port}`, { servicePort: group.port, endpointPort: endpoint.port });
    }
  }
  return {
    hostname: service.hostname,
    namespace: service.namespace,
    ports: service.ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })),
    labels: service.labels,
    externalAddresses: service.externalAddresses,
    // Sorted, so that endpoints coming and going on the same ports change nothing downstream.
    endpoints: [...pairs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, pair]) => pair),
  };
}

/** The registry's services (one per namespace and hostname) with what the conversion needs of their endpoints. */
export function registryServiceView(registry: {
  services: Collection<Service>;
  endpoints: Collection<PortEndpoints>;
}): Index<RegistryService> {
  const view = derive(
    registry.services,
    (ctx, service) =>
      toRegistryService(
        service,
        ctx.fetch(registry.endpoints, { namespace: service.namespace, where: (e) => e.hostname === service.hostname }),
      ),
    { name: "gatewayapi/registry-services", keyOf: (s) => `${s.namespace}/${s.hostname}` },
  );
  return view.addIndex("gatewayapi/registry-services-by-hostname", (s) => [s.hostname]);
}

/** Hostname lookups recorded as dependencies: only services the conversion asked about recompute it. */
function fetchingLookup(ctx: FetchContext, index: Index<RegistryService>): ServiceLookup {
  return { servicesByHostname: (hostname) => ctx.fetchIndex(index, hostname) };
}

/** The conversion of whatever the inputs hold now, kept up to date. */
export function liveConversion(
  inputs: LiveConversionInputs,
  settings: ConversionSettings,
): Singleton<ConversionResult> {
  return singleton(
    (ctx) => {
      const subjects = inputs.gatewayApi.flatMap((collection) => ctx.fetch(collection));
      // Without Gateway API objects the cluster is not read, so its changes do not recompute this.
      if (subjects.length === 0) return NOTHING;
      const cluster = inputs.cluster.flatMap((collection) => ctx.fetch(collection));
      return convertResources(
        [...subjects, ...cluster],
        { ...settings, now: TRANSITION_TIME },
        fetchingLookup(ctx, inputs.servicesByHostname),
      );
    },
    { name: "gatewayapi/conversion" },
  );
}
