// The conversion kept live over krt collections (Istio's gateway controller on its informers): one
// singleton recomputed when a Gateway API object changes, or a cluster object (Service, Secret, ConfigMap,
// ServiceEntry, Namespace) or registry service the conversion looked up by key. Other Secrets, Pods,
// endpoints that do not change a service's ports, and Istio's own kinds never reach it. Statuses carry unstamped transition times (TRANSITION_TIME) so that recomputing an
// unchanged input gives an equal result; whoever writes a status stamps it then.
import type { ConfigObject } from "../config/index.ts";
import { type Collection, derive, type FetchContext, type Index, type Singleton, singleton } from "../krt/index.ts";
import type { PortEndpoints, Service } from "../registry/index.ts";
import { TRANSITION_TIME } from "./conditions.ts";
import { type ConversionResult, convertResources } from "./index.ts";
import type { ConversionSettings, RegistryService, ServiceEndpoint, ServiceLookup } from "./model.ts";

/** The cluster objects the conversion looks up, one collection per kind, keyed "ns/name" (Namespaces "name"). */
export type ClusterCollections = Record<
  "services" | "secrets" | "configMaps" | "namespaces" | "serviceEntries",
  Collection<ConfigObject>
>;

export interface LiveConversionInputs {
  /** One collection per Gateway API kind: with none of these objects there is nothing to convert. */
  gatewayApi: readonly Collection<ConfigObject>[];
  cluster: ClusterCollections;
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

/**
 * A collection as the conversion's lookup map: looking up a key fetches that key alone, so only the
 * objects the conversion asked about recompute it; listing fetches the whole collection.
 */
class FetchingMap implements ReadonlyMap<string, ConfigObject> {
  constructor(
    private readonly ctx: FetchContext,
    private readonly collection: Collection<ConfigObject>,
  ) {}

  get(key: string): ConfigObject | undefined {
    return this.ctx.fetch(this.collection, { key })[0];
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  private all(): Map<string, ConfigObject> {
    return new Map(this.ctx.fetch(this.collection).map((obj) => [this.collection.keyOf(obj), obj]));
  }

  get size(): number {
    return this.all().size;
  }

  forEach(callback: (value: ConfigObject, key: string, map: ReadonlyMap<string, ConfigObject>) => void): void {
    for (const [key, value] of this.all()) callback(value, key, this);
  }

  entries(): MapIterator<[string, ConfigObject]> {
    return this.all().entries();
  }

  keys(): MapIterator<string> {
    return this.all().keys();
  }

  values(): MapIterator<ConfigObject> {
    return this.all().values();
  }

  [Symbol.iterator](): MapIterator<[string, ConfigObject]> {
    return this.entries();
  }
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
      const { services, secrets, configMaps, namespaces, serviceEntries } = inputs.cluster;
      const map = (collection: Collection<ConfigObject>) => new FetchingMap(ctx, collection);
      return convertResources(
        subjects,
        { ...settings, now: TRANSITION_TIME },
        fetchingLookup(ctx, inputs.servicesByHostname),
        {
          services: map(services),
          secrets: map(secrets),
          configMaps: map(configMaps),
          namespaces: map(namespaces),
          serviceEntries: map(serviceEntries),
        },
      );
    },
    { name: "gatewayapi/conversion" },
  );
}
