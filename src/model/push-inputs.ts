// What a push context is built from: the config objects in force, the registry's services, the
// mesh config. pushInputs reads them from the running control plane's store and registry, whose krt
// collections say what changed since the previous push: an unchanged kind's list (and the services)
// is handed on as the same array, so the push keeps the index it built from it.
import type { AmbientIndex } from "../ambient/index.ts";
import type { ConfigObject, MeshConfig, MeshNetworks } from "../config/index.ts";
import type { PortEndpoints, Service, ServiceRegistry } from "../registry/index.ts";
import type { ConfigStore } from "../sources/index.ts";
import type { MemoStore } from "../util/index.ts";
import { PUSH_KINDS, type PushKind } from "./push-kinds.ts";

/** The objects of each kind a push indexes, in the store's order (namespace, then name). */
export type KindConfigs = ReadonlyMap<PushKind, readonly ConfigObject[]>;

export interface PushInputs {
  /**
   * The config objects in force: every object, of any kind (kinds the push does not index are
   * ignored), or the objects of each push kind. A kind whose list is the previous push's array keeps
   * that push's index.
   */
  configs: readonly ConfigObject[] | KindConfigs;
  /** The registry's services, one per namespace and hostname (ServiceRegistry.services); the previous push's array keeps its index. */
  services: readonly Service[];
  /** The registry's endpoints (ServiceRegistry.endpoints): a proxy at an endpoint's IP is an instance of its service. */
  endpoints?: readonly PortEndpoints[];
  mesh: MeshConfig;
  /** Kubernetes DNS domain for short names; default cluster.local. */
  domainSuffix?: string;
  /** PILOT_SCOPE_GATEWAY_TO_NAMESPACE: a gateway proxy uses only Gateways of its namespace. Default false. */
  scopeGatewayToNamespace?: boolean;
  /**
   * PILOT_ENABLE_PERSISTENT_SESSION_FILTER: services labelled istio.io/persistent-session(-header) get
   * Envoy's stateful session filter. Default false.
   */
  persistentSessions?: boolean;
  /** PILOT_ENABLE_MONGO_FILTER: mongo ports get Envoy's mongo_proxy before tcp_proxy. Default true. */
  mongoFilter?: boolean;
  /** PILOT_ENABLE_REDIS_FILTER: redis ports get redis_proxy instead of tcp_proxy, their clusters MAGLEV. Default false. */
  redisFilter?: boolean;
  /** PILOT_ENABLE_MYSQL_FILTER: mysql ports get mysql_proxy before tcp_proxy. Default false. */
  mysqlFilter?: boolean;
  /** PILOT_ENABLE_QUIC_LISTENERS: TLS-terminated HTTPS gateway servers also listen for HTTP/3 over UDP. Default false. */
  quicListeners?: boolean;
  /**
   * SLUICE_ENABLE_VHDS (Sluice's own): sidecars on delta xDS get their port routes' service virtual hosts
   * as VHDS VirtualHost resources, so a change sends only the virtual hosts it changed. Default false.
   */
  vhds?: boolean;
  /**
   * PILOT_ENABLE_XDS_CACHE: built resources are kept and shared between proxies and pushes (Istio's XDS
   * cache). Default true; off, every proxy's resources are built anew, as Istio's benchmarks run.
   */
  xdsCache?: boolean;
  /**
   * PILOT_ENABLE_IP_AUTOALLOCATE: ServiceEntry hosts without addresses use those the IP autoallocation
   * controller recorded in their status, for proxies capturing DNS. Default true; off, the older
   * in-memory allocation instead, for proxies that also set DNS_AUTO_ALLOCATE.
   */
  ipAutoallocate?: boolean;
  /** istiod's --networksConfig: the networks' gateways (and, in the registry, which network endpoints are on). */
  meshNetworks?: MeshNetworks;
  /** The cluster the registry's Kubernetes Services are in (istiod's --clusterID); default Kubernetes. */
  clusterId?: string;
  /**
   * Where building the push keeps what it memoises across pushes (resolved VirtualService matches);
   * default the previous push's, else a store of its own, which the pushes built from it share.
   */
  memos?: MemoStore;
  /** The generation of each krt collection the lists were read from (see pushInputs). */
  generations?: ReadonlyMap<object, number>;
  /**
   * The ambient index (PILOT_ENABLE_AMBIENT), read live as istiod's push context reads it: which
   * services each waypoint proxy serves, and which workloads take HBONE. Without it a waypoint serves none.
   */
  waypoints?: WaypointIndex;
}

/** What a push reads of the ambient index. */
export type WaypointIndex = Pick<AmbientIndex, "servicesForWaypoint" | "workloadsForWaypoint" | "supportsTunnel">;

/** What a push keeps of its inputs, for the next push to reuse. */
export interface KeptInputs {
  readonly kinds: KindConfigs;
  readonly services: readonly Service[];
  readonly endpoints: readonly PortEndpoints[];
  readonly generations: ReadonlyMap<object, number>;
}

/**
 * Whether two pushes were built from the very same lists (each collection unchanged since, so each
 * list handed on as it was): then they hold the same state.
 */
export function sameKeptInputs(a: KeptInputs, b: KeptInputs): boolean {
  if (a.services !== b.services || a.endpoints !== b.endpoints || a.kinds.size !== b.kinds.size) return false;
  for (const [kind, configs] of a.kinds) if (b.kinds.get(kind) !== configs) return false;
  return true;
}

/** The feature flags that shape generated config: Istio's (PILOT_* environment settings) and Sluice's own. */
export type PushFeatures = Pick<
  PushInputs,
  | "persistentSessions"
  | "scopeGatewayToNamespace"
  | "mongoFilter"
  | "redisFilter"
  | "mysqlFilter"
  | "quicListeners"
  | "vhds"
  | "xdsCache"
  | "ipAutoallocate"
>;

/**
 * The inputs of a push from the store's objects in force and the registry's services and endpoints.
 * Each list is read again only when its krt collection changed since `previous` read it (its
 * generation moved); otherwise `previous`'s array is handed on, and with it the index built from it.
 */
export function pushInputs(
  store: Pick<ConfigStore, "list" | "collection">,
  registry: Pick<ServiceRegistry, "services" | "endpoints">,
  mesh: MeshConfig,
  options: PushFeatures & Pick<PushInputs, "domainSuffix" | "meshNetworks" | "clusterId" | "waypoints"> = {},
  previous?: KeptInputs,
): PushInputs {
  const generations = new Map<object, number>();
  const read = <T>(collection: { readonly generation: number }, kept: readonly T[] | undefined, list: () => T[]) => {
    generations.set(collection, collection.generation);
    return kept !== undefined && previous?.generations.get(collection) === collection.generation ? kept : list();
  };
  const configs = new Map<PushKind, readonly ConfigObject[]>();
  for (const [kind, key] of Object.entries(PUSH_KINDS) as [PushKind, string][]) {
    const objects = read(store.collection(key), previous?.kinds.get(kind), () => store.list(key).map((s) => s.object));
    configs.set(kind, objects);
  }
  return {
    configs,
    services: read(registry.services, previous?.services, () => registry.services.list()),
    endpoints: read(registry.endpoints, previous?.endpoints, () => registry.endpoints.list()),
    mesh,
    ...options,
    generations,
  };
}
