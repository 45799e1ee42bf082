// The conversion kept live over krt collections (Istio's gateway controller on its informers), in stages:
// Gateways, each route, and the assembly. A stage recomputes when its Gateway API objects change, or a
// cluster object (Service, Secret, ConfigMap, ServiceEntry, Namespace, Gateway) or registry service it
// looked up by key. Other Secrets, Pods, endpoints that do not change a service's ports, and Istio's own
// kinds never reach it. Statuses carry unstamped transition times (TRANSITION_TIME) so that recomputing an
// unchanged input gives an equal result; whoever writes a status stamps it then.
import type { ConfigObject, gatewayapi, ServiceEntry } from "../config/index.ts";
import {
  type Collection,
  type DebugRegistry,
  derive,
  type FetchContext,
  type Index,
  join,
  type Singleton,
  singleton,
} from "../krt/index.ts";
import type { PortEndpoints, Service } from "../registry/index.ts";
import { TRANSITION_TIME } from "./conditions.ts";
import {
  assembleConversion,
  type ConversionResult,
  type ConvertedRouteOf,
  convertGatewayStage,
  convertRoute,
  type GatewayStageOutput,
  routeContext,
  type StageInputs,
} from "./convert.ts";
import type { ConversionSettings, RegistryService, ServiceEndpoint, ServiceLookup } from "./model.ts";
import { objectKey } from "./model.ts";

/** The cluster objects the conversion looks up, one collection per kind, keyed "ns/name" (Namespaces "name"). */
export interface ClusterCollections
  extends Record<"services" | "secrets" | "configMaps" | "namespaces", Collection<ConfigObject>> {
  serviceEntries: Collection<ServiceEntry>;
}

/** The Gateway API objects converted, one collection per kind (cluster-scoped GatewayClasses keyed by name). */
export interface GatewayApiCollections {
  gatewayClasses: Collection<gatewayapi.GatewayClass>;
  gateways: Collection<gatewayapi.Gateway>;
  listenerSets: Collection<ConfigObject>;
  referenceGrants: Collection<ConfigObject>;
  backendTLSPolicies: Collection<ConfigObject>;
  /** The experimental kinds, read with settings.alphaGatewayApi only (see convertBackendPolicies). */
  xBackends: Collection<gatewayapi.XBackend>;
  xBackendTrafficPolicies: Collection<gatewayapi.XBackendTrafficPolicy>;
  /** Absent without the inference extension: istiod then reads no pool, and a route to one finds none. */
  inferencePools?: Collection<ConfigObject>;
  /** One per route kind (HTTPRoute, GRPCRoute, TCPRoute, TLSRoute). */
  routes: readonly Collection<ConfigObject>[];
}

export interface LiveConversionInputs {
  gatewayApi: GatewayApiCollections;
  cluster: ClusterCollections;
  /** The registry's services as the conversion sees them, by hostname (see registryServiceView). */
  servicesByHostname: Index<RegistryService>;
  /** Lists the stages' collections for /debug/krtz. */
  debug?: DebugRegistry;
}

/** The config store source the converted Istio config is kept under (see storeGatewayConversion). */
export const GATEWAY_API_SOURCE = "gateway-api";

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
    addresses: service.addresses.length > 0 ? service.addresses : [service.defaultAddress],
    kubernetesType: service.kubernetesType,
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
class FetchingMap<T extends ConfigObject> implements ReadonlyMap<string, T> {
  constructor(
    private readonly ctx: FetchContext,
    private readonly collection: Collection<T>,
  ) {}

  get(key: string): T | undefined {
    return this.ctx.fetch(this.collection, { key })[0];
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  private all(): Map<string, T> {
    return new Map(this.ctx.fetch(this.collection).map((obj) => [this.collection.keyOf(obj), obj]));
  }

  get size(): number {
    return this.all().size;
  }

  forEach(callback: (value: T, key: string, map: ReadonlyMap<string, T>) => void): void {
    for (const [key, value] of this.all()) callback(value, key, this);
  }

  entries(): MapIterator<[string, T]> {
    return this.all().entries();
  }

  keys(): MapIterator<string> {
    return this.all().keys();
  }

  values(): MapIterator<T> {
    return this.all().values();
  }

  [Symbol.iterator](): MapIterator<[string, T]> {
    return this.entries();
  }
}

/** Hostname lookups recorded as dependencies: only services the conversion asked about recompute it. */
function fetchingLookup(ctx: FetchContext, index: Index<RegistryService>): ServiceLookup {
  return { servicesByHostname: (hostname) => ctx.fetchIndex(index, hostname) };
}

const NO_GATEWAYS: GatewayStageOutput = { gateways: [], listenerSets: [], parents: new Map() };

/**
 * The conversion of whatever the inputs hold now, kept up to date in Istio's stages: the Gateways (one
 * singleton), each route on its own (recomputed when it changes, or the listeners it can attach to), and
 * their assembly with the backend policies into config and statuses.
 */
export function liveConversion(
  inputs: LiveConversionInputs,
  settings: ConversionSettings,
): Singleton<ConversionResult> {
  const { gatewayApi: api, debug } = inputs;
  // Every lookup a stage makes through these is a dependency of that stage alone.
  const stageInputs = (ctx: FetchContext): StageInputs => {
    const map = <T extends ConfigObject>(collection: Collection<T>) => new FetchingMap(ctx, collection);
    const { services, secrets, configMaps, namespaces, serviceEntries } = inputs.cluster;
    return {
      settings: { ...settings, now: TRANSITION_TIME },
      services: fetchingLookup(ctx, inputs.servicesByHostname),
      lookups: {
        services: map(services),
        secrets: map(secrets),
        configMaps: map(configMaps),
        namespaces: map(namespaces),
        serviceEntries: map(serviceEntries),
        gateways: map(api.gateways),
        gatewayClasses: map(api.gatewayClasses),
        backends: map(api.xBackends),
        ...(api.inferencePools && { inferencePools: map(api.inferencePools) }),
      },
    };
  };

  const gatewayStage = singleton(
    (ctx) =>
      convertGatewayStage(
        [
          ...ctx.fetch(api.gatewayClasses),
          ...ctx.fetch(api.gateways),
          ...ctx.fetch(api.listenerSets),
          ...ctx.fetch(api.referenceGrants),
        ],
        stageInputs(ctx),
      ),
    { name: "gatewayapi/gateways", debug },
  );
  // Apart, so that a Gateway whose status alone changed does not recompute every route.
  const parents = singleton((ctx) => (ctx.fetchOne(gatewayStage.asCollection()) ?? NO_GATEWAYS).parents, {
    name: "gatewayapi/parents",
    debug,
  });
  const routeKey = (r: ConvertedRouteOf) => `${r.route.kind}/${objectKey(r.route)}`;
  const routes = join(
    api.routes.map((collection) =>
      derive(
        collection,
        (ctx, route): ConvertedRouteOf => {
          const listeners = ctx.fetchOne(parents.asCollection()) ?? NO_GATEWAYS.parents;
          const context = routeContext(ctx.fetch(api.referenceGrants), listeners, stageInputs(ctx));
          return { route, converted: convertRoute(route, context) };
        },
        { name: `gatewayapi/routes/${collection.name}`, keyOf: routeKey, debug },
      ),
    ),
    { name: "gatewayapi/routes", keyOf: routeKey, debug },
  );

  return singleton(
    (ctx) => {
      const stage = ctx.fetchOne(gatewayStage.asCollection()) ?? NO_GATEWAYS;
      const converted = ctx.fetch(routes);
      const objects = [
        ...ctx.fetch(api.gatewayClasses),
        ...ctx.fetch(api.backendTLSPolicies),
        ...(settings.alphaGatewayApi ? [...ctx.fetch(api.xBackendTrafficPolicies), ...ctx.fetch(api.xBackends)] : []),
        ...(api.inferencePools ? ctx.fetch(api.inferencePools) : []),
      ];
      const empty = stage.gateways.length + stage.listenerSets.length + converted.length + objects.length === 0;
      // Without Gateway API objects the cluster is not read, so its changes do not recompute this.
      if (empty) return NOTHING;
      return assembleConversion(objects, stage, converted, stageInputs(ctx));
    },
    { name: "gatewayapi/conversion", debug },
  );
}
