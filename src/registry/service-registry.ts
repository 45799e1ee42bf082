// The ServiceRegistry: services, workloads and endpoints as krt collections over the config store's
// Kubernetes and Istio kinds, and the aggregate view (see index.ts). Remote clusters (Istio's
// multicluster secrets) add their Kubernetes services and endpoints under their own cluster ID; the
// aggregate view merges them with the config cluster's by hostname, as Istio's aggregate registry.
import type { ConfigObject, MeshConfig, MeshNetworks } from "../config/index.ts";
import type { ServiceEntry, WorkloadEntry, WorkloadGroup } from "../config/types/index.ts";
import type { Collection, DebugRegistry, Index, JoinCollection, Labels, StaticSingleton } from "../krt/index.ts";
import { derive, deriveMany, join, labelsContain, StaticCollection, staticSingleton } from "../krt/index.ts";
import { aggregate, type PortEndpointsKey } from "./aggregate.ts";
import type { KubeOptions } from "./kube.ts";
import { kubeEndpoints, kubeService, sliceServiceKey } from "./kube.ts";
import type {
  PortEndpoints,
  RegistryEndpoints,
  Service,
  ServiceEndpoint,
  WorkloadInstance,
  WorkloadServices,
} from "./model.ts";
import { hostKey, registryKey } from "./model.ts";
import { networkOf } from "./networks.ts";
import type { WorkloadGroupTemplate } from "./serviceentry.ts";
import { serviceEntryEndpoints, serviceEntryServices, workloadGroupTemplate } from "./serviceentry.ts";
import { nodesByName, podWorkload, workloadEntryObjectWorkload, workloadKey } from "./workloads.ts";

/** The config store's collections the registry reads, one per kind. */
export interface RegistryInputs {
  services: Collection<ConfigObject>;
  endpointSlices: Collection<ConfigObject>;
  endpoints: Collection<ConfigObject>;
  pods: Collection<ConfigObject>;
  nodes: Collection<ConfigObject>;
  serviceEntries: Collection<ServiceEntry>;
  workloadEntries: Collection<WorkloadEntry>;
  workloadGroups: Collection<WorkloadGroup>;
  /** Namespaces: the system namespace's topology.istio.io/network label is the cluster's default network. */
  namespaces?: Collection<ConfigObject>;
}

/** A remote cluster's Kubernetes kinds, as the registry reads them (Istio config comes from the config cluster only). */
export type ClusterInputs = Pick<
  RegistryInputs,
  "services" | "endpointSlices" | "endpoints" | "pods" | "nodes" | "namespaces"
>;

/** One cluster's Kubernetes services and their endpoints, as a remote cluster's part of the registry. */
interface KubeCollections {
  services: Collection<Service>;
  endpoints: Collection<RegistryEndpoints>;
}

export interface RegistryOptions {
  /** Kubernetes DNS domain (istiod's --domain); default cluster.local. */
  domainSuffix?: string;
  /** Source of the trust domain for SPIFFE identities (default cluster.local). */
  mesh?: MeshConfig;
  /** Istio's cluster ID; default "Kubernetes", as istiod's. */
  clusterId?: string;
  /** Which network endpoints without a network label are on (fromRegistry, fromCidr). */
  meshNetworks?: MeshNetworks;
  debug?: DebugRegistry;
}

export class ServiceRegistry implements WorkloadServices {
  /** The cluster its Kubernetes objects are in (Istio's cluster ID). */
  readonly clusterId: string;
  /** The mesh networks endpoints without a network of their own are assigned from (setMeshNetworks). */
  readonly #meshNetworks: StaticSingleton<MeshNetworks>;
  /** Workloads by `kind/ns/name`: every Pod (ready or not) and every WorkloadEntry. */
  readonly workloads: Collection<WorkloadInstance>;
  /** Services of each registry, by `registry/ns/object/hostname`. */
  readonly registryServices: Collection<Service>;
  /** Endpoints of each registry service, under the same keys. */
  readonly registryEndpoints: Collection<RegistryEndpoints>;
  /** One service per `ns/hostname` (see aggregate.ts for which one wins). */
  readonly services: Collection<Service>;
  /** Endpoints of each port of each aggregate service, by `ns/hostname/port`. */
  readonly endpoints: Collection<PortEndpoints>;
  readonly workloadGroups: Collection<WorkloadGroupTemplate>;
  private readonly servicesByHostname: Index<Service>;
  readonly #portEndpointsKey: PortEndpointsKey;
  readonly #allServices: JoinCollection<Service>;
  readonly #allEndpoints: JoinCollection<RegistryEndpoints>;
  readonly #kubeOptions: (
    clusterId: string,
    namespaces: Collection<ConfigObject> | undefined,
    trustDomain?: string,
  ) => KubeOptions;
  /** Remote clusters' parts, by cluster ID. */
  readonly #remote = new Map<string, KubeCollections>();

  /** The mesh networks in force. */
  get meshNetworks(): MeshNetworks | undefined {
    return this.#meshNetworks.get();
  }

  /** New mesh networks (meshNetworks followed): the endpoints whose network came from them are assigned anew. */
  setMeshNetworks(meshNetworks: MeshNetworks): void {
    this.#meshNetworks.set(meshNetworks);
  }

  constructor(inputs: RegistryInputs, options: RegistryOptions = {}) {
    const debug = options.debug;
    const clusterId = options.clusterId ?? "Kubernetes";
    this.clusterId = clusterId;
    this.#meshNetworks = staticSingleton(options.meshNetworks, { name: "registry/mesh-networks" });
    this.#kubeOptions = (cluster, namespaces, trustDomain) => ({
      domainSuffix: options.domainSuffix ?? "cluster.local",
      trustDomain: trustDomain || options.mesh?.trustDomain || "cluster.local",
      clusterId: cluster,
      networkOf: networkOf({
        namespaces,
        // Sluice runs in the mesh's root namespace, which stands for istiod's own (as for debug auth).
        systemNamespace: options.mesh?.rootNamespace || "istio-system",
        meshNetworks: this.#meshNetworks,
        clusterId: cluster,
      }),
    });
    const kube = this.#kubeOptions(clusterId, inputs.namespaces);
    const entryWorkloads = derive(
      inputs.workloadEntries,
      (ctx, entry) => workloadEntryObjectWorkload(ctx, entry, kube),
      { name: "registry/workload-entry-workloads", keyOf: workloadKey, debug },
    );
    const local = kubeCollections(inputs, kube, entryWorkloads, debug);
    this.workloads = join([local.podWorkloads, entryWorkloads], {
      name: "registry/workloads",
      keyOf: workloadKey,
      debug,
    });

    const entryServices = deriveMany(inputs.serviceEntries, (_ctx, entry) => serviceEntryServices(entry), {
      name: "registry/serviceentry-services",
      keyOf: registryKey,
      debug,
    });
    const workloads = this.workloads;
    const entryEndpoints = deriveMany(
      inputs.serviceEntries,
      (ctx, entry) => serviceEntryEndpoints(ctx, entry, serviceEntryServices(entry), workloads, kube),
      { name: "registry/serviceentry-endpoints", keyOf: (e) => e.key, debug },
    );

    this.#allServices = join([local.services, entryServices], {
      name: "registry/all-services",
      keyOf: registryKey,
      debug,
    });
    this.#allEndpoints = join([local.endpoints, entryEndpoints], {
      name: "registry/all-endpoints",
      keyOf: (e) => e.key,
      debug,
    });
    this.registryServices = this.#allServices;
    this.registryEndpoints = this.#allEndpoints;
    const aggregated = aggregate(this.registryServices, this.registryEndpoints, clusterId, debug);
    this.services = aggregated.services;
    this.endpoints = aggregated.endpoints;
    this.#portEndpointsKey = aggregated.portEndpointsKey;
    this.servicesByHostname = this.services.addIndex("registry/services-by-hostname", (s) => [s.hostname]);
    this.workloadGroups = derive(inputs.workloadGroups, (_ctx, group) => workloadGroupTemplate(group), {
      name: "registry/workload-groups",
      keyOf: (g) => `${g.namespace}/${g.name}`,
      debug,
    });
  }

  /**
   * Adds the Kubernetes services and endpoints of remote cluster `clusterId` (its Services, EndpointSlices,
   * Pods, Nodes, Namespaces), or replaces those it was added with; they are followed until `removeCluster`.
   * Its services merge with the other clusters' of the same hostname; its endpoints carry its cluster ID.
   * Its workloads' and Services' identities are in `trustDomain` (that cluster's mesh config's), else
   * in the mesh's.
   */
  addCluster(clusterId: string, inputs: ClusterInputs, trustDomain?: string): void {
    if (clusterId === this.clusterId) throw new Error(`cluster ${clusterId} is the registry's own cluster`);
    // Remote clusters' Services select no WorkloadEntries: as in Istio, only the config cluster's do.
    const noEntries = new StaticCollection<WorkloadInstance>([], { keyOf: workloadKey });
    const kube = this.#kubeOptions(clusterId, inputs.namespaces, trustDomain);
    const added = kubeCollections(inputs, kube, noEntries, undefined);
    const previous = this.#remote.get(clusterId);
    // The new part joins before the old one leaves, so endpoints it still has never disappear in between.
    this.#allServices.add(added.services);
    this.#allEndpoints.add(added.endpoints);
    this.#remote.set(clusterId, added);
    if (previous) this.#detach(previous);
  }

  /** Removes remote cluster `clusterId`'s services and endpoints. */
  removeCluster(clusterId: string): void {
    const part = this.#remote.get(clusterId);
    if (!part) return;
    this.#remote.delete(clusterId);
    this.#detach(part);
  }

  /** The remote clusters added, by ID. */
  remoteClusters(): string[] {
    return [...this.#remote.keys()].sort();
  }

  #detach(part: KubeCollections): void {
    this.#allServices.remove(part.services);
    this.#allEndpoints.remove(part.endpoints);
  }

  /** The service standing for `hostname` in `namespace`. */
  service(hostname: string, namespace: string): Service | undefined {
    return this.services.get(hostKey(namespace, hostname));
  }

  /** Services declared in `namespace`. */
  servicesInNamespace(namespace: string): Service[] {
    return this.services.namespaceIndex().lookup(namespace);
  }

  /**
   * The services of `namespace`, of every registry, whose non-empty selector selects a workload labelled
   * `labels` (an empty selector selects nothing: such a service's endpoints are managed by hand).
   */
  servicesSelecting(namespace: string, labels: Readonly<Record<string, string>>): Service[] {
    return this.registryServices
      .namespaceIndex()
      .lookup(namespace)
      .filter((s) => s.selector !== null && Object.keys(s.selector).length > 0 && labelsContain(labels, s.selector));
  }

  /** Every namespace's service for `hostname` (a ServiceEntry host can be declared in several). */
  servicesForHostname(hostname: string): Service[] {
    return this.servicesByHostname.lookup(hostname);
  }

  /** The endpoints of one port of the service `hostname` in `namespace` (what EDS sends for `outbound|port||hostname`). */
  endpointsFor(hostname: string, port: number, namespace: string): ServiceEndpoint[] {
    return this.endpoints.get(this.#portEndpointsKey(namespace, hostname, port))?.endpoints ?? [];
  }

  /** Workloads in `namespace` whose labels contain `labels`. */
  workloadsMatching(namespace: string, labels: Labels): WorkloadInstance[] {
    return this.workloads
      .namespaceIndex()
      .lookup(namespace)
      .filter((w) => labelsContain(w.labels, labels));
  }
}

/**
 * One cluster's Kubernetes part: its Pods as workloads, its Services, and their endpoints (from its
 * EndpointSlices or Endpoints, and the `entryWorkloads` its Services select).
 */
function kubeCollections(
  inputs: ClusterInputs,
  kube: KubeOptions,
  entryWorkloads: Collection<WorkloadInstance>,
  debug: DebugRegistry | undefined,
): KubeCollections & { podWorkloads: Collection<WorkloadInstance> } {
  const nodes = nodesByName(inputs.nodes);
  const podWorkloads = derive(inputs.pods, (ctx, pod) => podWorkload(ctx, pod, nodes, kube), {
    name: "registry/pod-workloads",
    keyOf: workloadKey,
    debug,
  });
  const readyPodsByIp = podWorkloads.addIndex("registry/ready-pods-by-ip", (w) =>
    w.ready ? [`${w.namespace}/${w.address}`] : [],
  );
  const endpointInputs = {
    slicesByService: inputs.endpointSlices.addIndex("registry/slices-by-service", sliceServiceKey),
    endpointsByName: inputs.endpoints.addIndex("registry/endpoints-by-name", (e) => [
      `${e.metadata.namespace ?? ""}/${e.metadata.name ?? ""}`,
    ]),
    podWorkloads,
    readyPodsByIp,
    entryWorkloads,
  };
  const services = derive(inputs.services, (_ctx, svc) => kubeService(svc, kube), {
    name: "registry/kubernetes-services",
    keyOf: registryKey,
    debug,
  });
  const endpoints = derive(
    inputs.services,
    (ctx, svc) => kubeEndpoints(ctx, kubeService(svc, kube), endpointInputs, kube),
    { name: "registry/kubernetes-endpoints", keyOf: (e) => e.key, debug },
  );
  return { podWorkloads, services, endpoints };
}
