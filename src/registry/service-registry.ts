// The ServiceRegistry: services, workloads and endpoints as krt collections over the config store's
// Kubernetes and Istio kinds, and the aggregate view (see index.ts).
import type { ConfigObject, MeshConfig, MeshNetworks } from "../config/index.ts";
import type { ServiceEntry, WorkloadEntry, WorkloadGroup } from "../config/types/index.ts";
import type { Collection, DebugRegistry, Index, Labels } from "../krt/index.ts";
import { derive, deriveMany, join, labelsContain } from "../krt/index.ts";
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
  /** The mesh networks its endpoints' networks were assigned from. */
  readonly meshNetworks: MeshNetworks | undefined;
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

  constructor(inputs: RegistryInputs, options: RegistryOptions = {}) {
    const debug = options.debug;
    const clusterId = options.clusterId ?? "Kubernetes";
    this.clusterId = clusterId;
    this.meshNetworks = options.meshNetworks;
    const kube: KubeOptions = {
      domainSuffix: options.domainSuffix ?? "cluster.local",
      trustDomain: options.mesh?.trustDomain || "cluster.local",
      clusterId,
      networkOf: networkOf({
        namespaces: inputs.namespaces,
        // Sluice runs in the mesh's root namespace, which stands for istiod's own (as for debug auth).
        systemNamespace: options.mesh?.rootNamespace || "istio-system",
        meshNetworks: options.meshNetworks,
        clusterId,
      }),
    };
    const nodes = nodesByName(inputs.nodes);
    const podWorkloads = derive(inputs.pods, (ctx, pod) => podWorkload(ctx, pod, nodes, kube), {
      name: "registry/pod-workloads",
      keyOf: workloadKey,
      debug,
    });
    const entryWorkloads = derive(
      inputs.workloadEntries,
      (ctx, entry) => workloadEntryObjectWorkload(ctx, entry, kube),
      { name: "registry/workload-entry-workloads", keyOf: workloadKey, debug },
    );
    this.workloads = join([podWorkloads, entryWorkloads], { name: "registry/workloads", keyOf: workloadKey, debug });

    const readyPodsByIp = podWorkloads.addIndex("registry/ready-pods-by-ip", (w) =>
      w.ready ? [`${w.namespace}/${w.address}`] : [],
    );
    const kubeEndpointInputs = {
      slicesByService: inputs.endpointSlices.addIndex("registry/slices-by-service", sliceServiceKey),
      endpointsByName: inputs.endpoints.addIndex("registry/endpoints-by-name", (e) => [
        `${e.metadata.namespace ?? ""}/${e.metadata.name ?? ""}`,
      ]),
      podWorkloads,
      readyPodsByIp,
      entryWorkloads,
    };
    const kubeServices = derive(inputs.services, (_ctx, svc) => kubeService(svc, kube), {
      name: "registry/kubernetes-services",
      keyOf: registryKey,
      debug,
    });
    const kubeServiceEndpoints = derive(
      inputs.services,
      (ctx, svc) => kubeEndpoints(ctx, kubeService(svc, kube), kubeEndpointInputs, kube),
      { name: "registry/kubernetes-endpoints", keyOf: (e) => e.key, debug },
    );

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

    this.registryServices = join([kubeServices, entryServices], {
      name: "registry/all-services",
      keyOf: registryKey,
      debug,
    });
    this.registryEndpoints = join([kubeServiceEndpoints, entryEndpoints], {
      name: "registry/all-endpoints",
      keyOf: (e) => e.key,
      debug,
    });
    const aggregated = aggregate(this.registryServices, this.registryEndpoints, debug);
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
