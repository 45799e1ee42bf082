// The ambient index (Istio's ambient.Index): workloads and services as ztunnel's Addresses, and the
// security policies ztunnel enforces as its Authorizations, as krt collections over the config store's
// Pods, Services, Namespaces, Nodes, AuthorizationPolicies and PeerAuthentications. A Pod change
// recomputes that Pod's workload alone; a Service change, the Service and the workloads of its
// namespace it selects (before or after); a policy change, the policy and the workloads it could
// apply to. What changed is told by resource name, which is what WDS pushes name.
import type { Logger } from "pino";
import type { ConfigObject } from "../config/index.ts";
import type { AuthorizationPolicy, gatewayapi, PeerAuthentication } from "../config/types/index.ts";
import type { Collection, DebugRegistry, FetchContext, Index, Labels } from "../krt/index.ts";
import { derive, type StaticSingleton, staticSingleton } from "../krt/index.ts";
import { parseGoBool } from "../util/index.ts";
import type { AddressInfo, PolicyInfo, ServiceInfo, WorkloadInfo } from "./model.ts";
import { policyCollections, workloadPolicies } from "./policies.ts";
import { kubeServiceInfo } from "./services.ts";
import {
  boundWaypoint,
  gatewayWaypoint,
  isManagedGateway,
  LABEL_GATEWAY_NAME,
  type Waypoint,
  waypointKey,
} from "./waypoints.ts";
import { nodeLocality, podWorkloadInfo } from "./workloads.ts";

const LABEL_NETWORK = "topology.istio.io/network";
const LABEL_INGRESS_USE_WAYPOINT = "istio.io/ingress-use-waypoint";

/** `istio.io/ingress-use-waypoint` of the Service, else of its namespace, read as Go's ParseBool (invalid: false). */
function ingressUseWaypoint(serviceLabels: Labels, namespaceLabels: Labels): boolean {
  const value = serviceLabels[LABEL_INGRESS_USE_WAYPOINT] ?? namespaceLabels[LABEL_INGRESS_USE_WAYPOINT];
  return value !== undefined && parseGoBool(value) === true;
}

/** The config store's collections the index reads. */
export interface AmbientInputs {
  pods: Collection<ConfigObject>;
  services: Collection<ConfigObject>;
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
    Buffer.from(a.resource.value).equals(b.resource.value) &&
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
  readonly #workloadsByAlias: Index<WorkloadInfo>;
  readonly #servicesByAlias: Index<ServiceInfo>;
  readonly #workloadsByService: Index<WorkloadInfo>;

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
    this.services = derive(
      inputs.services,
      (ctx, svc) => {
        const namespaceName = svc.metadata.namespace ?? "";
        const namespace = ctx.fetchIndex(namespacesByName, namespaceName)[0];
        const labels = svc.metadata.labels ?? {};
        const waypoint = isManagedGateway(labels)
          ? undefined
          : boundWaypoint(ctx, waypointSources, namespaceName, labels, "service");
        return kubeServiceInfo(svc, {
          domainSuffix: options.domainSuffix,
          network: network(ctx),
          namespaceAnnotations: namespace?.metadata.annotations ?? {},
          ...(waypoint
            ? {
                waypoint: {
                  address: waypoint.address,
                  ingressUseWaypoint: ingressUseWaypoint(labels, namespace?.metadata.labels ?? {}),
                },
              }
            : {}),
        });
      },
      {
        name: "ambient/services",
        keyOf: (s) => s.name,
        equals: (a, b) => sameAddress(a, b, (s) => [s.selector, s.targetPortNames]),
        selectorOf: (s) => s.selector ?? undefined,
        debug,
      },
    );
    // A Service under each `namespace/key=value` of its selector: a Pod looks up its own labels' keys
    // instead of testing every Service of its namespace.
    const servicesBySelectorLabel = this.services.addIndex("ambient/services-by-selector-label", (s) =>
      Object.entries(s.selector ?? {}).map(([key, value]) => `${s.namespace}/${key}=${value}`),
    );
    const selecting = (ctx: FetchContext, pod: ConfigObject): ServiceInfo[] => {
      const namespace = pod.metadata.namespace ?? "";
      const labels = pod.metadata.labels ?? {};
      const found = new Map<string, ServiceInfo>();
      for (const [key, value] of Object.entries(labels)) {
        for (const s of ctx.fetchIndex(servicesBySelectorLabel, `${namespace}/${key}=${value}`, {
          selectsNonEmpty: labels,
        }))
          found.set(s.name, s);
      }
      return [...found.values()];
    };
    const { authorizationPolicies, policies } = policyCollections(inputs, options);
    this.policies = policies;
    const policySources = { authorizationPolicies, peerAuthentications: inputs.peerAuthentications };
    this.workloads = derive(
      inputs.pods,
      (ctx, pod) => {
        const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName ?? "";
        const node = nodeName ? ctx.fetchIndex(nodesByName, nodeName)[0] : undefined;
        const namespace = pod.metadata.namespace ?? "";
        const labels = pod.metadata.labels ?? {};
        // A waypoint's own pod is reached as its binding says, and through no waypoint.
        const instanceOf = labels[LABEL_GATEWAY_NAME]
          ? ctx.fetch(this.waypoints, { key: `${namespace}/${labels[LABEL_GATEWAY_NAME]}` })[0]
          : undefined;
        const waypoint = instanceOf ? undefined : boundWaypoint(ctx, waypointSources, namespace, labels, "workload");
        return podWorkloadInfo(pod, {
          ...(instanceOf?.defaultBinding ? { applicationTunnel: instanceOf.defaultBinding } : {}),
          ...(waypoint ? { waypoint: waypoint.address } : {}),
          clusterId: options.clusterId,
          network: network(ctx),
          trustDomain: ctx.fetchOne(trustDomain.asCollection())?.trustDomain ?? "cluster.local",
          services: selecting(ctx, pod),
          locality: nodeLocality(node),
          policies: workloadPolicies(
            ctx,
            policySources,
            options.rootNamespace(),
            pod.metadata.namespace ?? "",
            pod.metadata.labels ?? {},
          ),
        });
      },
      {
        name: "ambient/workloads",
        keyOf: (w) => w.name,
        equals: (a, b) => sameAddress(a, b, (w) => w.labels),
        debug,
      },
    );
    this.#workloadsByAlias = this.workloads.addIndex("ambient/workloads-by-address", (w) => w.aliases);
    this.#servicesByAlias = this.services.addIndex("ambient/services-by-address", (s) => s.aliases);
    this.#workloadsByService = this.workloads.addIndex("ambient/workloads-by-service", (w) => w.serviceKeys);
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
   * changed what ztunnel is sent, or went), once per batch of store changes.
   */
  onAddressesChanged(handler: (names: ReadonlySet<string>) => void): () => void {
    const told = tellChanged(handler);
    const offWorkloads = this.workloads.registerBatch(told, false);
    const offServices = this.services.registerBatch(told, false);
    return () => {
      offWorkloads();
      offServices();
    };
  }
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
