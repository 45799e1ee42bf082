// The ambient index (Istio's ambient.Index): workloads and services as ztunnel's Addresses, and the
// security policies ztunnel enforces as its Authorizations, as krt collections over the config store's
// Pods, Services, ServiceEntries, WorkloadEntries, Namespaces, Nodes, Gateways, AuthorizationPolicies
// and PeerAuthentications. A Pod or WorkloadEntry change recomputes that workload alone; a Service or
// ServiceEntry change, its services, those sharing their hostnames, and the workloads of its namespace
// it selects (before or after); a policy change, the policy and the workloads it could apply to. What
// changed is told by resource name, which is what WDS pushes name.
import type { Logger } from "pino";
import { workloadapi } from "../api/index.ts";
import type { ConfigObject } from "../config/index.ts";
import type {
  AuthorizationPolicy,
  gatewayapi,
  PeerAuthentication,
  ServiceEntry,
  WorkloadEntry,
  WorkloadEntrySpec,
} from "../config/types/index.ts";
import type { Collection, DebugRegistry, FetchContext, Index, Labels } from "../krt/index.ts";
import { derive, deriveMany, join, type StaticSingleton, staticSingleton } from "../krt/index.ts";
import { workloadEntryName } from "../registry/index.ts";
import { compareStrings } from "../util/index.ts";
import {
  type AddressInfo,
  ipString,
  type PolicyInfo,
  type ServiceInfo,
  sameResource,
  type WorkloadInfo,
} from "./model.ts";
import { allowFromWaypointPolicies, policyCollections, workloadPolicies } from "./policies.ts";
import {
  creationTime,
  kubeServiceInfo,
  type ServiceContext,
  selectServices,
  serviceEntryServiceInfos,
} from "./services.ts";
import { type StatusReporter, statusReporters } from "./status.ts";
import {
  boundWaypoint,
  gatewayWaypoint,
  ingressUseWaypoint,
  isManagedGateway,
  LABEL_GATEWAY_NAME,
  type Waypoint,
  type WaypointKey,
  waypointAddressKey,
  waypointHostnameKey,
  waypointKey,
  waypointKeyIndexKeys,
  workloadWaypoint,
} from "./waypoints.ts";
import { entryWorkloadInfo, nodeLocality, podWorkloadInfo, type WorkloadContext } from "./workloads.ts";

const LABEL_NETWORK = "topology.istio.io/network";
/** The resolutions a ServiceEntry without endpoints still has workloads for: its hosts, by DNS. */
const DNS_RESOLUTIONS = new Set(["DNS", "DYNAMIC_DNS", "DNS_ROUND_ROBIN"]);

/** A service by the object it comes from and its host, before one of a hostname is picked. */
function sourceKey(s: ServiceInfo): string {
  return `${s.source.kind}/${s.namespace}/${s.source.name}/${s.service.hostname}`;
}

/** What a service carries for the index and workloads besides what it sends. */
function serviceRest(s: ServiceInfo): unknown {
  return [s.selector, s.targetPortNames, s.portNames, s.source, s.creationTime, s.waypointKey];
}

/** The config store's collections the index reads. */
export interface AmbientInputs {
  pods: Collection<ConfigObject>;
  services: Collection<ConfigObject>;
  serviceEntries: Collection<ServiceEntry>;
  workloadEntries: Collection<WorkloadEntry>;
  namespaces: Collection<ConfigObject>;
  nodes: Collection<ConfigObject>;
  authorizationPolicies: Collection<AuthorizationPolicy>;
  peerAuthentications: Collection<PeerAuthentication>;
  /** Gateway API Gateways and GatewayClasses: the waypoints. */
  gateways: Collection<gatewayapi.Gateway>;
  gatewayClasses: Collection<ConfigObject>;
}

export interface AmbientOptions {
  /** Istio's cluster ID (workload uids start with it). */
  clusterId: string;
  domainSuffix: string;
  /** Istio's system namespace: its topology.istio.io/network label is the cluster's network. */
  systemNamespace: string;
  /** The mesh's trust domain at start (setTrustDomain follows the mesh config). */
  trustDomain: string;
  /** The mesh config's root namespace: its policies without a selector are mesh-wide. */
  rootNamespace: () => string;
  /** AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY: send `istio.io/dry-run` AuthorizationPolicies to ztunnel. */
  dryRunPolicies: boolean;
  /** PILOT_AUTO_ALLOW_WAYPOINT_POLICY (default off): workloads allow their waypoints' identities by a policy each. */
  allowFromWaypoint: boolean;
  /** AMBIENT_ENABLE_STATUS: build what is written to the objects' status (statusReporters). */
  status?: boolean;
  /** Where what a policy holds that cannot be read is told. */
  log?: Logger;
  debug?: DebugRegistry;
}

/**
 * Two infos are the same when they send the same bytes and what else they carry for the index and the
 * other collections (`rest`: labels, selectors, port names) is equal.
 */
function sameAddress<T extends AddressInfo>(a: T, b: T, rest: (info: T) => unknown): boolean {
  return (
    a.name === b.name &&
    sameResource(a.resource, b.resource) &&
    a.aliases.join(",") === b.aliases.join(",") &&
    JSON.stringify(rest(a)) === JSON.stringify(rest(b))
  );
}

export class AmbientIndex {
  readonly #trustDomain: StaticSingleton<{ trustDomain: string }>;
  readonly workloads: Collection<WorkloadInfo>;
  readonly services: Collection<ServiceInfo>;
  /** Gateways with an address, by `namespace/name`: what `istio.io/use-waypoint` can name. */
  readonly waypoints: Collection<Waypoint>;
  /** Every Authorization ztunnel is sent, by `namespace/name`. */
  readonly policies: Collection<PolicyInfo>;
  /** What is written back to the objects' status (Istio's ambient status), by writer; none unless `status`. */
  readonly statusReporters: StatusReporter[];
  readonly #workloadsByAlias: Index<WorkloadInfo>;
  readonly #servicesByAlias: Index<ServiceInfo>;
  readonly #workloadsByService: Index<WorkloadInfo>;
  readonly #workloadsByNode: Index<WorkloadInfo>;
  readonly #servicesByWaypoint: Index<ServiceInfo>;
  readonly #workloadsByWaypoint: Index<WorkloadInfo>;

  constructor(inputs: AmbientInputs, options: AmbientOptions) {
    const { debug } = options;
    this.#trustDomain = staticSingleton({ trustDomain: options.trustDomain }, { name: "ambient/trust-domain" });
    const trustDomain = this.#trustDomain;
    const namespacesByName = inputs.namespaces.addIndex("ambient/namespaces-by-name", (ns) =>
      ns.metadata.name ? [ns.metadata.name] : [],
    );
    const nodesByName = inputs.nodes.addIndex("ambient/nodes-by-name", (n) =>
      n.metadata.name ? [n.metadata.name] : [],
    );
    const network = (ctx: FetchContext) =>
      ctx.fetchIndex(namespacesByName, options.systemNamespace)[0]?.metadata.labels?.[LABEL_NETWORK] ?? "";
    this.waypoints = derive<gatewayapi.Gateway, Waypoint>(
      inputs.gateways,
      (ctx, gateway) => {
        const namespace = gateway.metadata.namespace ?? "";
        const className = gateway.spec?.gatewayClassName ?? "";
        const gatewayClass = ctx.fetch(inputs.gatewayClasses, { where: (c) => c.metadata.name === className })[0];
        const instances = ctx.fetch(inputs.pods, {
          namespace,
          labels: { [LABEL_GATEWAY_NAME]: gateway.metadata.name ?? "" },
        });
        const accounts = instances.map(
          (p) => (p.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName ?? "",
        );
        return gatewayWaypoint(gateway, gatewayClass, accounts, network(ctx));
      },
      { name: "ambient/waypoints", keyOf: waypointKey, debug },
    );
    const waypointSources = { waypoints: this.waypoints, namespacesByName };
    // What a Service's or a ServiceEntry's conversion reads: the network, its namespace, its waypoint.
    const serviceContext = (ctx: FetchContext, object: ConfigObject): ServiceContext => {
      const namespaceName = object.metadata.namespace ?? "";
      const namespace = ctx.fetchIndex(namespacesByName, namespaceName)[0];
      const labels = object.metadata.labels ?? {};
      const waypoint = isManagedGateway(labels)
        ? undefined
        : boundWaypoint(ctx, waypointSources, namespaceName, labels, "service").waypoint;
      return {
        network: network(ctx),
        namespaceAnnotations: namespace?.metadata.annotations ?? {},
        ...(waypoint
          ? {
              waypoint: {
                key: waypointKey(waypoint),
                address: waypoint.address,
                ingressUseWaypoint: ingressUseWaypoint(labels, namespace?.metadata.labels ?? {}).use,
              },
            }
          : {}),
      };
    };
    const serviceOptions = (name: string) => ({
      name,
      keyOf: sourceKey,
      equals: (a: ServiceInfo, b: ServiceInfo) => sameAddress(a, b, serviceRest),
      debug,
    });
    const kubeServices = derive(
      inputs.services,
      (ctx, svc) => kubeServiceInfo(svc, { domainSuffix: options.domainSuffix, ...serviceContext(ctx, svc) }),
      serviceOptions("ambient/kube-services"),
    );
    const entryServices = deriveMany(
      inputs.serviceEntries,
      (ctx, entry) => serviceEntryServiceInfos(entry, serviceContext(ctx, entry)),
      serviceOptions("ambient/service-entry-services"),
    );
    const candidateServices = join([kubeServices, entryServices], serviceOptions("ambient/candidate-services"));
    const candidatesByHostname = candidateServices.addIndex("ambient/candidate-services-by-hostname", (s) => [
      s.service.hostname,
    ]);
    // Of the services sharing its hostname, each is sent when it wins its namespace.
    this.services = derive(
      candidateServices,
      (ctx, candidate) =>
        selectServices(ctx.fetchIndex(candidatesByHostname, candidate.service.hostname)).find(
          (s) => sourceKey(s) === sourceKey(candidate),
        ),
      {
        ...serviceOptions("ambient/services"),
        keyOf: (s) => s.name,
        selectorOf: (s) => s.selector ?? undefined,
      },
    );
    // A service under each `namespace/key=value` of its selector: a workload looks up its own labels'
    // keys instead of testing every service of its namespace.
    const servicesBySelectorLabel = this.services.addIndex("ambient/services-by-selector-label", (s) =>
      Object.entries(s.selector ?? {}).map(([key, value]) => `${s.namespace}/${key}=${value}`),
    );
    const selecting = (ctx: FetchContext, namespace: string, labels: Labels): ServiceInfo[] => {
      const found = new Map<string, ServiceInfo>();
      for (const [key, value] of Object.entries(labels)) {
        for (const s of ctx.fetchIndex(servicesBySelectorLabel, `${namespace}/${key}=${value}`, {
          selectsNonEmpty: labels,
        }))
          found.set(s.name, s);
      }
      return [...found.values()];
    };
    const servicesByEntry = this.services.addIndex("ambient/services-by-service-entry", (s) =>
      s.source.kind === "ServiceEntry" ? [`${s.namespace}/${s.source.name}`] : [],
    );
    const { ztunnelBindings, authorizationPolicies, policies } = policyCollections(
      { ...inputs, waypoints: this.waypoints, trustDomain: trustDomain.asCollection() },
      options,
    );
    this.policies = policies;
    const policySources = { authorizationPolicies, peerAuthentications: inputs.peerAuthentications };
    // `waypoint`: the key of the workload's own waypoint, whose allowing policy it references too.
    const workloadContext = (
      ctx: FetchContext,
      namespace: string,
      labels: Labels,
      services: readonly ServiceInfo[],
      waypoint?: string,
    ): WorkloadContext => ({
      clusterId: options.clusterId,
      network: network(ctx),
      trustDomain: ctx.fetchOne(trustDomain.asCollection())?.trustDomain ?? "cluster.local",
      services,
      policies: [
        ...workloadPolicies(ctx, policySources, options.rootNamespace(), namespace, labels),
        ...(options.allowFromWaypoint ? allowFromWaypointPolicies(ctx, this.waypoints, waypoint, services) : []),
      ],
    });
    const workloadOptions = (name: string) => ({
      name,
      keyOf: (w: WorkloadInfo) => w.name,
      equals: (a: WorkloadInfo, b: WorkloadInfo) => sameAddress(a, b, (w) => [w.labels, w.creationTime]),
      debug,
    });
    const podWorkloads = derive(
      inputs.pods,
      (ctx, pod) => {
        const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName ?? "";
        const node = nodeName ? ctx.fetchIndex(nodesByName, nodeName)[0] : undefined;
        const namespace = pod.metadata.namespace ?? "";
        const labels = pod.metadata.labels ?? {};
        const bound = workloadWaypoint(ctx, waypointSources, namespace, labels);
        return podWorkloadInfo(pod, {
          ...workloadContext(ctx, namespace, labels, selecting(ctx, namespace, labels), bound.binding.name),
          ...bound,
          locality: nodeLocality(node),
        });
      },
      workloadOptions("ambient/pod-workloads"),
    );
    const workloadEntryWorkloads = derive(
      inputs.workloadEntries,
      (ctx, entry) => {
        const name = entry.metadata.name ?? "";
        const namespace = entry.metadata.namespace ?? "";
        // The spec's labels under the object's, as Istio merges them.
        const labels = { ...entry.spec?.labels, ...entry.metadata.labels };
        const annotations = entry.metadata.annotations ?? {};
        const identity = {
          uid: `${options.clusterId}/networking.istio.io/WorkloadEntry/${namespace}/${name}`,
          name,
          namespace,
          labels,
          annotations,
          workloadName: workloadEntryName(name, annotations, labels),
          creationTime: creationTime(entry),
        };
        const bound = workloadWaypoint(ctx, waypointSources, namespace, labels);
        return entryWorkloadInfo(entry.spec ?? {}, identity, {
          ...workloadContext(ctx, namespace, labels, selecting(ctx, namespace, labels), bound.binding.name),
          ...bound,
        });
      },
      workloadOptions("ambient/workload-entry-workloads"),
    );
    const entryEndpointWorkloads = deriveMany(
      inputs.serviceEntries,
      (ctx, entry) => {
        const spec = entry.spec ?? { hosts: [] };
        const name = entry.metadata.name ?? "";
        const namespace = entry.metadata.namespace ?? "";
        const labels = entry.metadata.labels ?? {};
        const annotations = entry.metadata.annotations ?? {};
        // A DNS entry without endpoints or a selector has one per host: the host itself.
        const implicit =
          (spec.endpoints ?? []).length === 0 &&
          DNS_RESOLUTIONS.has(spec.resolution ?? "NONE") &&
          !spec.workloadSelector;
        if (!implicit && (spec.endpoints ?? []).length === 0) return [];
        // Only the hosts that won their hostname: an entry another wins over sends no endpoints.
        const services = ctx.fetchIndex(servicesByEntry, `${namespace}/${name}`);
        if (services.length === 0) return [];
        const endpoints: WorkloadEntrySpec[] = implicit
          ? services.map((s) => ({ address: s.service.hostname }))
          : (spec.endpoints ?? []);
        return endpoints.map((endpoint, i) => {
          const identity = {
            uid: `${options.clusterId}/networking.istio.io/ServiceEntry/${namespace}/${name}/${endpoint.address ?? ""}`,
            name,
            namespace,
            labels,
            annotations,
            workloadName: name,
            creationTime: creationTime(entry),
          };
          // An implicit endpoint is its host's alone and has no waypoint of its own.
          if (implicit)
            return entryWorkloadInfo(
              endpoint,
              identity,
              workloadContext(ctx, namespace, labels, services.slice(i, i + 1)),
            );
          const bound = workloadWaypoint(ctx, waypointSources, namespace, endpoint.labels ?? {});
          return entryWorkloadInfo(endpoint, identity, {
            ...workloadContext(ctx, namespace, labels, services, bound.binding.name),
            ...bound,
          });
        });
      },
      workloadOptions("ambient/service-entry-workloads"),
    );
    this.workloads = join(
      [podWorkloads, workloadEntryWorkloads, entryEndpointWorkloads],
      workloadOptions("ambient/workloads"),
    );
    this.statusReporters = options.status
      ? statusReporters(
          { ...inputs, ...waypointSources, clusterId: options.clusterId, rootNamespace: options.rootNamespace },
          { services: this.services, workloads: this.workloads, ztunnelBindings },
        )
      : [];
    this.#workloadsByAlias = this.workloads.addIndex("ambient/workloads-by-address", (w) => w.aliases);
    this.#servicesByAlias = this.services.addIndex("ambient/services-by-address", (s) => s.aliases);
    this.#workloadsByService = this.workloads.addIndex("ambient/workloads-by-service", (w) => w.serviceKeys);
    this.#workloadsByNode = this.workloads.addIndex("ambient/workloads-by-node", (w) =>
      w.workload.node ? [w.workload.node] : [],
    );
    this.#servicesByWaypoint = this.services.addIndex("ambient/services-by-waypoint", owningWaypointKeys);
    this.#workloadsByWaypoint = this.workloads.addIndex("ambient/workloads-by-waypoint", (w) =>
      isManagedGateway(w.labels) || !w.workload.waypoint ? [] : gatewayAddressKeys([w.workload.waypoint]),
    );
  }

  /** Whether the workload at `ip` on `network` takes HBONE (Istio's SupportsTunnel): it is in the ambient mesh. */
  supportsTunnel(network: string, ip: string): boolean {
    return this.#workloadsByAlias
      .lookup(`${network}/${ip}`)
      .some((w) => w.workload.tunnelProtocol === workloadapi.TunnelProtocol.HBONE);
  }

  /**
   * The services a waypoint serves (Istio's ServicesForWaypoint): those whose waypoint names one of
   * the key's hostnames in its namespace, or one of its addresses on its network; each once, unsorted.
   */
  servicesForWaypoint(key: WaypointKey): ServiceInfo[] {
    const found = new Map<string, ServiceInfo>();
    for (const indexKey of waypointKeyIndexKeys(key)) {
      for (const service of this.#servicesByWaypoint.lookup(indexKey)) {
        if (!found.has(service.name)) found.set(service.name, service);
      }
    }
    return [...found.values()];
  }

  /**
   * The workloads a waypoint serves directly (Istio's WorkloadsForWaypoint): those whose own waypoint
   * the key names, managed waypoints and east-west gateways left out; oldest first, then by uid.
   */
  workloadsForWaypoint(key: WaypointKey): WorkloadInfo[] {
    const found = new Map<string, WorkloadInfo>();
    for (const indexKey of waypointKeyIndexKeys(key)) {
      for (const workload of this.#workloadsByWaypoint.lookup(indexKey)) found.set(workload.name, workload);
    }
    return [...found.values()].sort((a, b) => a.creationTime - b.creationTime || compareStrings(a.name, b.name));
  }

  /** A new mesh trust domain: every workload is sent again with it. */
  setTrustDomain(trustDomain: string): void {
    this.#trustDomain.set({ trustDomain });
  }

  /** Every workload and service. */
  all(): AddressInfo[] {
    return [...this.workloads.list(), ...this.services.list()];
  }

  /**
   * What a name stands for (Istio's Lookup): a workload by uid, or by `network/ip`; else a service by
   * `namespace/hostname` or `network/ip`, with every workload behind it.
   */
  lookup(name: string): AddressInfo[] {
    const workload = this.workloads.get(name);
    if (workload) return [workload];
    const byAddress = this.#workloadsByAlias.lookup(name);
    if (byAddress.length > 0) return byAddress;
    const service = this.services.get(name) ?? this.#servicesByAlias.lookup(name)[0];
    if (!service) return [];
    return [service, ...this.#workloadsByService.lookup(service.name)];
  }

  /**
   * The addresses of `names` (Istio's AddressInformation), each once, and the names that stand for
   * nothing (removed, or never there).
   */
  addressInformation(names: Iterable<string>): { found: AddressInfo[]; missing: string[] } {
    const found = new Map<string, AddressInfo>();
    const missing: string[] = [];
    for (const name of names) {
      const infos = this.lookup(name);
      if (infos.length === 0) missing.push(name);
      for (const info of infos) found.set(info.name, info);
    }
    return { found: [...found.values()], missing };
  }
  /**
   * The workloads an on-demand subscriber is kept subscribed to besides the names it asked for (Istio's
   * AdditionalPodSubscriptions): those behind `addresses` that serve a service it is subscribed to, and
   * (ztunnel serves its own node's pods) every workload on `node` not subscribed yet.
   */
  additionalSubscriptions(node: string, addresses: Iterable<string>, subscribed: ReadonlySet<string>): string[] {
    const names = new Set<string>();
    for (const address of addresses) {
      for (const info of this.lookup(address)) {
        const workload = this.workloads.get(info.name);
        if (workload?.serviceKeys.some((key) => subscribed.has(key))) names.add(workload.name);
      }
    }
    if (node !== "") {
      for (const w of this.#workloadsByNode.lookup(node)) if (!subscribed.has(w.name)) names.add(w.name);
    }
    return [...names];
  }

  /**
   * The policies of `names` that exist (Istio's Policies), or every policy when `names` is not given.
   */
  policyInformation(names?: Iterable<string>): PolicyInfo[] {
    if (!names) return this.policies.list();
    const found: PolicyInfo[] = [];
    for (const name of names) {
      const policy = this.policies.get(name);
      if (policy) found.push(policy);
    }
    return found;
  }

  /**
   * Calls `handler` with the resource names of the policies that changed (appeared, changed what
   * ztunnel is sent, or went), once per batch of store changes.
   */
  onPoliciesChanged(handler: (names: ReadonlySet<string>) => void): () => void {
    return this.policies.registerBatch(tellChanged(handler), false);
  }

  /**
   * Calls `handler` with the resource names of the workloads and services that changed (appeared,
   * changed what ztunnel is sent, or went), once per batch of store changes, and the waypoints (their
   * index keys) they were or are bound to.
   */
  onAddressesChanged(handler: (names: ReadonlySet<string>, waypoints: ReadonlySet<string>) => void): () => void {
    const told = (events: readonly { old?: WorkloadInfo | ServiceInfo; new?: WorkloadInfo | ServiceInfo }[]) => {
      const names = new Set<string>();
      const waypoints = new Set<string>();
      for (const e of events) {
        for (const info of [e.old, e.new]) {
          if (!info) continue;
          names.add(info.name);
          for (const key of boundWaypointKeys(info)) waypoints.add(key);
        }
      }
      if (names.size > 0) handler(names, waypoints);
    };
    const offWorkloads = this.workloads.registerBatch(told, false);
    const offServices = this.services.registerBatch(told, false);
    return () => {
      offWorkloads();
      offServices();
    };
  }
}

/**
 * The waypoints a service's traffic goes through, as index keys (its weighted waypoints, else its
 * waypoint); none for the Services of managed waypoints and east-west gateways themselves.
 */
function owningWaypointKeys(service: ServiceInfo): string[] {
  if (service.selector && isManagedGateway(service.selector)) return [];
  const weighted = service.service.weightedWaypoints.flatMap((w) => (w.destination ? [w.destination] : []));
  return gatewayAddressKeys(
    weighted.length > 0 ? weighted : service.service.waypoint ? [service.service.waypoint] : [],
  );
}

/** Waypoint addresses as index keys: by hostname in its namespace, or by IP on its network. */
function gatewayAddressKeys(waypoints: readonly workloadapi.GatewayAddress[]): string[] {
  return waypoints.flatMap((w) => {
    const destination = w.destination;
    if (destination.case === "hostname") {
      return [waypointHostnameKey(destination.value.namespace, destination.value.hostname)];
    }
    if (destination.case === "address") {
      return [waypointAddressKey(destination.value.network, ipString(destination.value.address))];
    }
    return [];
  });
}

/** The index key of the waypoint an address is bound to (Istio's WaypointRef), if any. */
function boundWaypointKeys(info: WorkloadInfo | ServiceInfo): string[] {
  const waypoint = info.kind === "workload" ? info.workload.waypoint : info.service.waypoint;
  return waypoint ? gatewayAddressKeys([waypoint]) : [];
}

/** A batch handler calling `handler` with the names of what its events changed, when any. */
function tellChanged(
  handler: (names: ReadonlySet<string>) => void,
): (events: readonly { old?: { name: string }; new?: { name: string } }[]) => void {
  return (events) => {
    const names = new Set<string>();
    for (const e of events) {
      if (e.old) names.add(e.old.name);
      if (e.new) names.add(e.new.name);
    }
    if (names.size > 0) handler(names);
  };
}
