// The indexed state one push works on (the content of Istio's PushContext): every lookup a
// generator needs, over an immutable snapshot of the config objects and the registry's services.
// Built by buildPushContext; an index whose input list is the previous snapshot's array (pushInputs
// hands on the list of a kind whose krt collection did not change) is taken from the previous snapshot.
import { isDeepStrictEqual } from "node:util";
import { type WorkloadInfo, waypointKeyIndexKeys } from "../ambient/index.ts";
import { type ConfigObject, kindKey, type MeshConfig, parseApiVersion } from "../config/index.ts";
import { isKind } from "../config/typed.ts";
import type {
  AuthorizationPolicy,
  DestinationRuleTrafficPolicy,
  EnvoyFilter,
  Gateway,
  RequestAuthentication,
  Telemetry,
  TrafficExtension,
  VirtualService,
} from "../config/types/index.ts";
import type { KindObjects } from "../config/types/kind-objects.gen.ts";
import { labelsContain } from "../krt/index.ts";
import type { PortEndpoints, Service, ServiceEndpoint } from "../registry/index.ts";
import { MemoStore } from "../util/index.ts";
import { allocateAddresses } from "./auto-allocate.ts";
import { compareStrings, creationTime, namespaceOf, sortByCreationTime } from "./config-meta.ts";
import { DestinationRuleIndex, destinationRuleForProxy } from "./destination-rule-index.ts";
import type { ConsolidatedDestinationRule } from "./destination-rule-merge.ts";
import { EnvoyFilterIndex } from "./envoy-filter-index.ts";
import { type MergedGateway, mergeGateways } from "./gateway-merge.ts";
import { type ServiceTarget, selectGateways } from "./gateway-select.ts";
import {
  discoverNetworkGateways,
  gatewaysByNetwork,
  type MeshNetworkGateway,
  type NetworkGateways,
} from "./network-gateways.ts";
import { type EffectiveMtls, type MtlsMode, PeerAuthenticationIndex } from "./peer-authentication.ts";
import type { ProxyNode } from "./proxy.ts";
import type { KeptInputs, KindConfigs, PushInputs, WaypointIndex } from "./push-inputs.ts";
import { PUSH_KINDS, type PushKind } from "./push-kinds.ts";
import { compareServices, ServiceIndex } from "./service-index.ts";
import { SidecarIndex } from "./sidecar-index.ts";
import type { SidecarScope } from "./sidecar-scope.ts";
import { pushTrafficExtensions } from "./traffic-extensions.ts";
import { VirtualServiceIndex, virtualServicesForHost } from "./virtual-service-index.ts";
import {
  LABEL_GATEWAY_MANAGED,
  LABEL_TUNNEL,
  MESH_CONTROLLER,
  waypointKeyForProxy,
  waypointServices,
} from "./waypoint-services.ts";
import { type PolicyWorkload, policyAttachment, WorkloadPolicyIndex } from "./workload-policies.ts";

interface KeptServiceTargets {
  labels: Workload["labels"];
  ipAddresses: readonly string[] | undefined;
  configNamespace: string;
  targets: readonly ServiceTarget[];
}

/** A workload a policy can attach to: a proxy's config namespace and labels. */
type Workload = Pick<ProxyNode, "configNamespace" | "labels">;

export class PushSnapshot {
  readonly mesh: MeshConfig;
  readonly domainSuffix: string;
  readonly rootNamespace: string;
  readonly services: ServiceIndex;
  readonly virtualServices: VirtualServiceIndex;
  readonly destinationRules: DestinationRuleIndex;
  readonly sidecars: SidecarIndex;
  /** Istio Gateways, oldest first. */
  readonly gateways: readonly Gateway[];
  readonly peerAuthentications: PeerAuthenticationIndex;
  readonly requestAuthentications: WorkloadPolicyIndex<RequestAuthentication>;
  readonly authorizationPolicies: WorkloadPolicyIndex<AuthorizationPolicy>;
  readonly telemetries: WorkloadPolicyIndex<Telemetry>;
  /** TrafficExtensions and the WasmPlugins translated into them (pushTrafficExtensions). */
  readonly trafficExtensions: WorkloadPolicyIndex<TrafficExtension>;
  readonly envoyFilters: EnvoyFilterIndex;
  private readonly scopeGatewayToNamespace: boolean;
  /** PILOT_ENABLE_PERSISTENT_SESSION_FILTER (see PushInputs). */
  readonly persistentSessions: boolean;
  /** PILOT_ENABLE_MONGO_FILTER, PILOT_ENABLE_REDIS_FILTER, PILOT_ENABLE_MYSQL_FILTER (see PushInputs). */
  readonly protocolFilters: { readonly mongo: boolean; readonly redis: boolean; readonly mysql: boolean };
  /** PILOT_ENABLE_QUIC_LISTENERS (see PushInputs). */
  readonly quicListeners: boolean;
  /** SLUICE_ENABLE_VHDS (see PushInputs). */
  readonly vhds: boolean;
  /** PILOT_ENABLE_XDS_CACHE (see PushInputs). */
  readonly xdsCache: boolean;
  /** PILOT_ENABLE_IP_AUTOALLOCATE (see PushInputs). */
  readonly ipAutoallocate: boolean;
  /** Where building keeps what it memoises across pushes (see PushInputs.memos). */
  readonly memos: MemoStore;
  /** Every network gateway, host names included (Istio's unresolved gateways). */
  readonly allNetworkGateways: readonly MeshNetworkGateway[];
  /** The gateways EDS stands in for other networks' endpoints (IP addresses only), by network. */
  readonly networkGateways: NetworkGateways;
  /** Merged gateways computed in this push, by proxy namespace, labels and identities. */
  private readonly mergedGateways = new Map<string, MergedGateway | undefined>();
  private readonly endpoints: readonly PortEndpoints[];
  /** Endpoints by address, built on first use by serviceTargets. */
  private endpointsByIp: Map<string, ServiceEndpoint[]> | undefined;
  /**
   * serviceTargets by proxy object, with the labels, addresses and namespace they were found for: every
   * generator of a push asks for them, and deciding which proxies a push concerns asks for all of them.
   */
  private readonly targetsByProxy = new WeakMap<object, KeptServiceTargets>();
  /** The ambient index's view of waypoints (PushInputs.waypoints). */
  private readonly waypoints: WaypointIndex | undefined;
  /** Istio's deterministic ServiceEntry address allocation, computed on first use. */
  private allocatedAddresses: Map<string, string[]> | undefined;
  /** The input lists each index was built from, for the next push to hand on while unchanged (pushInputs). */
  readonly inputs: KeptInputs;

  constructor(inputs: PushInputs, previous?: PushSnapshot) {
    this.mesh = inputs.mesh;
    this.domainSuffix = inputs.domainSuffix ?? "cluster.local";
    this.rootNamespace = inputs.mesh.rootNamespace ?? "istio-system";
    this.scopeGatewayToNamespace = inputs.scopeGatewayToNamespace ?? false;
    this.persistentSessions = inputs.persistentSessions ?? false;
    this.protocolFilters = {
      mongo: inputs.mongoFilter ?? true,
      redis: inputs.redisFilter ?? false,
      mysql: inputs.mysqlFilter ?? false,
    };
    this.quicListeners = inputs.quicListeners ?? false;
    this.vhds = inputs.vhds ?? false;
    this.xdsCache = inputs.xdsCache ?? true;
    this.ipAutoallocate = inputs.ipAutoallocate ?? true;
    this.memos = inputs.memos ?? previous?.memos ?? new MemoStore();
    this.waypoints = inputs.waypoints;
    const kinds = "length" in inputs.configs ? groupByKind(inputs.configs) : inputs.configs;
    this.endpoints = inputs.endpoints ?? [];
    this.inputs = {
      kinds,
      services: inputs.services,
      endpoints: this.endpoints,
      generations: inputs.generations ?? new Map(),
    };

    const sameSettings =
      previous !== undefined && previous.mesh === this.mesh && previous.domainSuffix === this.domainSuffix;
    /** The previous snapshot's index when its input list is the same array, else a new one. */
    /** The previous push's index when its kinds' lists are the ones it was built from, else a new one. */
    const reuse = <I>(kind: PushKind | readonly PushKind[], pick: (p: PushSnapshot) => I, build: () => I): I =>
      previous &&
      sameSettings &&
      (typeof kind === "string" ? [kind] : kind).every((k) => previous.inputs.kinds.get(k) === kinds.get(k))
        ? pick(previous)
        : build();
    /** The kind's objects, typed by kind (each kind's list holds only that kind's objects). */
    const of = <P extends PushKind>(kind: P): KindObjects[(typeof PUSH_KINDS)[P]][] =>
      (kinds.get(kind) ?? []).filter((c) => isKind(c, PUSH_KINDS[kind]));
    const root = this.rootNamespace;
    const mesh = this.mesh;

    this.services =
      previous && sameSettings && previous.inputs.services === inputs.services
        ? previous.services
        : new ServiceIndex(inputs.services, mesh.defaultServiceExportTo);
    const gateways = discoverNetworkGateways({
      meshNetworks: inputs.meshNetworks,
      services: inputs.services,
      clusterId: inputs.clusterId ?? "Kubernetes",
    });
    // Unchanged gateways keep their objects: cached load assignments name them by identity.
    const gatewaysKept = previous !== undefined && isDeepStrictEqual(previous.allNetworkGateways, gateways);
    this.allNetworkGateways = gatewaysKept ? previous.allNetworkGateways : gateways;
    this.networkGateways = gatewaysKept ? previous.networkGateways : gatewaysByNetwork(gateways);
    this.virtualServices = reuse(
      "virtualService",
      (p) => p.virtualServices,
      () =>
        new VirtualServiceIndex(
          of("virtualService"),
          mesh.defaultVirtualServiceExportTo,
          this.domainSuffix,
          this.memos,
        ),
    );
    this.destinationRules = reuse(
      "destinationRule",
      (p) => p.destinationRules,
      () =>
        new DestinationRuleIndex(of("destinationRule"), root, mesh.defaultDestinationRuleExportTo, this.domainSuffix),
    );
    // Scopes derive from services, VirtualServices and DestinationRules: reusable (cache included) only if all are.
    const scopeInputsKept =
      this.services === previous?.services &&
      this.virtualServices === previous.virtualServices &&
      this.destinationRules === previous.destinationRules;
    const buildSidecars = () => new SidecarIndex(of("sidecar"), this, root);
    this.sidecars = scopeInputsKept ? reuse("sidecar", (p) => p.sidecars, buildSidecars) : buildSidecars();
    this.gateways = reuse(
      "gateway",
      (p) => p.gateways,
      () => sortByCreationTime(of("gateway")),
    );
    this.peerAuthentications = reuse(
      "peerAuthentication",
      (p) => p.peerAuthentications,
      () => new PeerAuthenticationIndex(of("peerAuthentication"), root),
    );
    this.requestAuthentications = reuse(
      "requestAuthentication",
      (p) => p.requestAuthentications,
      () => new WorkloadPolicyIndex(of("requestAuthentication"), root, policyAttachment),
    );
    this.authorizationPolicies = reuse(
      "authorizationPolicy",
      (p) => p.authorizationPolicies,
      () => new WorkloadPolicyIndex(of("authorizationPolicy"), root, policyAttachment),
    );
    this.telemetries = reuse(
      "telemetry",
      (p) => p.telemetries,
      () => new WorkloadPolicyIndex(of("telemetry"), root, policyAttachment),
    );
    this.trafficExtensions = reuse(
      ["trafficExtension", "wasmPlugin"],
      (p) => p.trafficExtensions,
      () =>
        new WorkloadPolicyIndex(
          pushTrafficExtensions(of("trafficExtension"), of("wasmPlugin")),
          root,
          policyAttachment,
        ),
    );
    this.envoyFilters = reuse(
      "envoyFilter",
      (p) => p.envoyFilters,
      () => new EnvoyFilterIndex(of("envoyFilter"), root),
    );
  }

  /** The proxy's SidecarScope (computed on first use, then shared by every proxy it applies to). */
  sidecarScope(proxy: Pick<ProxyNode, "type" | "configNamespace" | "labels">): SidecarScope {
    return this.sidecars.scopeFor(proxy);
  }

  /** Services config in `namespace` can see (exportTo applied). */
  servicesVisibleTo(namespace: string): Service[] {
    return this.services.visibleTo(namespace);
  }

  isServiceVisible(service: Service, namespace: string): boolean {
    return this.services.isVisible(service, namespace);
  }

  /** The service `hostname` as the proxy's scope sees it. */
  serviceForHostname(
    proxy: Pick<ProxyNode, "type" | "configNamespace" | "labels">,
    hostname: string,
  ): Service | undefined {
    return this.sidecarScope(proxy).service(hostname);
  }

  /** VirtualServices bound to `gateway` ("mesh" or "ns/name") visible to `namespace`, in precedence order. */
  virtualServicesForGateway(namespace: string, gateway: string): readonly VirtualService[] {
    return this.virtualServices.forGateway(namespace, gateway);
  }

  /** Those of virtualServicesForGateway with a host overlapping `hostname` (either may be a wildcard). */
  virtualServicesForHost(namespace: string, gateway: string, hostname: string): VirtualService[] {
    return virtualServicesForHost(this.virtualServices.forGateway(namespace, gateway), hostname);
  }

  /** Every consolidated DestinationRule for `service` seen from `proxyNamespace` (Istio's destinationRule lookup). */
  destinationRulesFor(
    proxyNamespace: string,
    service: Pick<Service, "hostname" | "namespace">,
  ): ConsolidatedDestinationRule[] {
    return this.destinationRules.forService(proxyNamespace, service);
  }

  /** The DestinationRule the proxy applies to outbound traffic to `service`: selector-matched first, else the catch-all. */
  destinationRule(
    proxy: Workload,
    service: Pick<Service, "hostname" | "namespace">,
  ): ConsolidatedDestinationRule | undefined {
    const rules = this.destinationRulesFor(proxy.configNamespace, service);
    return destinationRuleForProxy(rules, "outbound", proxy.configNamespace, proxy.labels);
  }

  /**
   * The proxy's service ports (Istio's GetProxyServiceTargets): Kubernetes services of its namespace
   * whose selector matches its labels, then those with an endpoint at one of its IPs (ServiceEntry
   * endpoints, WorkloadEntries, Pods), whose target port is the endpoint's. A ServiceEntry's
   * workloadSelector is not matched here: its workloads' ports (a WorkloadEntry's port map) come with
   * their endpoints, as in Istio's ServiceEntry registry. Oldest service first, then by hostname.
   */
  serviceTargets(proxy: Workload & Partial<Pick<ProxyNode, "ipAddresses">>): readonly ServiceTarget[] {
    const kept = this.targetsByProxy.get(proxy);
    if (
      kept?.labels === proxy.labels &&
      kept.ipAddresses === proxy.ipAddresses &&
      kept.configNamespace === proxy.configNamespace
    ) {
      return kept.targets;
    }
    const targets = this.findServiceTargets(proxy);
    this.targetsByProxy.set(proxy, {
      labels: proxy.labels,
      ipAddresses: proxy.ipAddresses,
      configNamespace: proxy.configNamespace,
      targets,
    });
    return targets;
  }

  private findServiceTargets(proxy: Workload & Partial<Pick<ProxyNode, "ipAddresses">>): ServiceTarget[] {
    const targets = this.services
      .selecting(proxy.configNamespace)
      .filter((s) => s.selector !== null && labelsContain(proxy.labels, s.selector))
      .flatMap((service) => service.ports.map((port) => ({ service, port })));
    const bySelector = new Set(targets.map(({ service, port }) => `${service.hostname}:${port.port}`));
    // Several workloads may share an IP on different ports (proxyless servers on 127.0.0.1): one target each.
    const seen = new Set<string>();
    for (const ip of proxy.ipAddresses ?? []) {
      for (const e of this.endpointsAt(ip)) {
        if (e.namespace !== proxy.configNamespace) continue;
        if (bySelector.has(`${e.hostname}:${e.servicePort}`)) continue;
        const key = `${e.hostname}:${e.servicePort}:${e.port}`;
        if (seen.has(key)) continue;
        const service = this.services.all.find((s) => s.namespace === e.namespace && s.hostname === e.hostname);
        const port = service?.ports.find((p) => p.port === e.servicePort);
        if (!service || !port) continue;
        seen.add(key);
        // A unix socket endpoint (port 0) keeps the service's own target port.
        targets.push({ service, port: e.port > 0 ? { ...port, targetPort: e.port } : port });
      }
    }
    // Istio keeps a proxy's targets oldest service first (SetServiceTargets); the sort is stable.
    return targets.sort((a, b) => compareServices(a.service, b.service));
  }

  /**
   * The services a waypoint proxy serves (Istio's findWaypointResources), oldest first; none without
   * the ambient index.
   */
  waypointServices(proxy: ProxyNode): Service[] {
    if (!this.waypoints) return [];
    const key = waypointKeyForProxy(proxy, this.serviceTargets(proxy));
    return waypointServices(this.waypoints, key, (hostname, namespace) => this.services.service(hostname, namespace));
  }

  /**
   * The workloads a waypoint proxy serves directly (Istio's WorkloadsForWaypoint), oldest first; none
   * without the ambient index.
   */
  waypointWorkloads(proxy: ProxyNode): WorkloadInfo[] {
    if (!this.waypoints) return [];
    return this.waypoints.workloadsForWaypoint(waypointKeyForProxy(proxy, this.serviceTargets(proxy)));
  }

  /**
   * Whether an address push naming `waypointsUpdated` (the waypoint keys of the changed addresses, old
   * and new) concerns this waypoint proxy (Istio's waypointNeedsPush with scoped address pushes).
   */
  waypointUpdated(proxy: ProxyNode, waypointsUpdated: ReadonlySet<string>): boolean {
    const key = waypointKeyForProxy(proxy, this.serviceTargets(proxy));
    return waypointKeyIndexKeys(key).some((k) => waypointsUpdated.has(k));
  }

  /**
   * Whether an endpoint takes HBONE (Istio's supportTunnel): it is a waypoint, says it does
   * (`networking.istio.io/tunnel: http`), or is in the ambient mesh.
   */
  supportsTunnel(ep: Pick<ServiceEndpoint, "labels" | "network" | "address">): boolean {
    if (ep.labels[LABEL_GATEWAY_MANAGED] === MESH_CONTROLLER) return true;
    if ((ep.labels[LABEL_TUNNEL] ?? "").split(",").includes("http")) return true;
    return this.waypoints?.supportsTunnel(ep.network, ep.address) ?? false;
  }

  /**
   * The addresses a proxy capturing DNS uses for a ServiceEntry host without any: those recorded in
   * its status, or with ipAutoallocate off Istio's in-memory allocation (see auto-allocate.ts); [] for
   * other services.
   */
  autoAllocatedAddresses(service: Service): readonly string[] {
    if (this.ipAutoallocate) return service.autoAllocatedAddresses ?? [];
    this.allocatedAddresses ??= allocateAddresses(this.services.all);
    return this.allocatedAddresses.get(`${service.namespace}/${service.hostname}`) ?? [];
  }

  private endpointsAt(ip: string): readonly ServiceEndpoint[] {
    if (!this.endpointsByIp) {
      this.endpointsByIp = new Map();
      for (const e of this.endpoints.flatMap((p) => p.endpoints)) {
        const list = this.endpointsByIp.get(e.address) ?? [];
        list.push(e);
        this.endpointsByIp.set(e.address, list);
      }
    }
    return this.endpointsByIp.get(ip) ?? [];
  }

  /**
   * The Gateways a router proxy serves, merged into its listeners; undefined when none selects it.
   * Selection reads the proxy's service targets (by selector and by endpoint IP, as Istio's
   * proxy.ServiceTargets), so proxies alike in namespace, labels, identities and targets share one merge.
   */
  mergedGateway(
    proxy: Workload & Pick<ProxyNode, "verifiedIdentities"> & Partial<Pick<ProxyNode, "ipAddresses">>,
  ): MergedGateway | undefined {
    const targets = this.serviceTargets(proxy);
    const labels = Object.entries(proxy.labels).sort(([a], [b]) => compareStrings(a, b));
    const targetKeys = targets.map(
      (t) => `${t.service.namespace}/${t.service.hostname}:${t.port.port}:${t.port.targetPort}`,
    );
    const key = JSON.stringify([proxy.configNamespace, labels, proxy.verifiedIdentities ?? [], targetKeys]);
    if (!this.mergedGateways.has(key)) {
      const selected = selectGateways(this.gateways, proxy, targets, this.scopeGatewayToNamespace);
      this.mergedGateways.set(
        key,
        selected.length > 0 ? mergeGateways(selected, proxy.verifiedIdentities, this.quicListeners) : undefined,
      );
    }
    return this.mergedGateways.get(key);
  }

  effectiveMtls(proxy: Workload): EffectiveMtls {
    return this.peerAuthentications.effectiveMtls(proxy.configNamespace, proxy.labels);
  }

  /** The mTLS mode of one inbound port of the proxy's workload. */
  mtlsMode(proxy: Workload, port: number): MtlsMode {
    return this.peerAuthentications.mtlsMode(proxy.configNamespace, proxy.labels, port);
  }

  /**
   * Istio's BestEffortInferServiceMTLSMode, the server side auto-mTLS assumes: unknown (undefined)
   * for mesh-external services; for passthrough traffic (headless service, or a DestinationRule
   * load balancer PASSTHROUGH) DISABLE when there are no endpoints or one has TLS disabled; else
   * the namespace or mesh PeerAuthentication mode, else PERMISSIVE. Workload and port policies are
   * not considered (the client cannot know which workload answers).
   */
  inferServiceMtlsMode(
    service: Service,
    trafficPolicy: DestinationRuleTrafficPolicy | undefined,
    endpoints: readonly Pick<ServiceEndpoint, "tlsMode">[],
  ): MtlsMode | undefined {
    if (service.meshExternal) return undefined;
    if (service.resolution === "Passthrough" || trafficPolicy?.loadBalancer?.simple === "PASSTHROUGH") {
      if (endpoints.length === 0 || endpoints.some((e) => e.tlsMode === "disabled")) return "DISABLE";
    }
    return this.peerAuthentications.namespaceMtlsMode(service.namespace) ?? "PERMISSIVE";
  }

  requestAuthenticationsFor(proxy: Workload): RequestAuthentication[] {
    return this.requestAuthentications.forWorkload(policyWorkload(proxy));
  }

  /** Root namespace policies first, then the proxy namespace's, each oldest first (group by action with networking/authz). */
  authorizationPoliciesFor(proxy: Workload): AuthorizationPolicy[] {
    return this.authorizationPolicies.forWorkload(policyWorkload(proxy));
  }

  /**
   * What a waypoint enforces for one of its services, or (no service) on its direct pod chains
   * (Istio's authz.NewBuilderForService): only policies targeting its Gateway, the service, or the
   * waypoint GatewayClass; root namespace first, then the waypoint's, then the service's.
   */
  waypointAuthorizationPolicies(proxy: Workload, service?: Service): AuthorizationPolicy[] {
    return this.authorizationPolicies.forWorkload(waypointPolicyWorkload(proxy, service));
  }

  /** The RequestAuthentications a waypoint applies for one of its services (Istio's authn.NewBuilderForService). */
  waypointRequestAuthentications(proxy: Workload, service?: Service): RequestAuthentication[] {
    return this.requestAuthentications.forWorkload(waypointPolicyWorkload(proxy, service));
  }

  telemetriesFor(proxy: Workload): Telemetry[] {
    return this.telemetries.forWorkload(policyWorkload(proxy));
  }

  /**
   * Highest priority first (unset: lowest), ties in istiod's order of TrafficExtensions: the proxy's
   * namespace before the root namespace, each oldest first, then by name (a WasmPlugin's translated name,
   * `<name>~istio-translated-wasmplugin`). The generator groups them by phase.
   */
  trafficExtensionsFor(proxy: Workload): TrafficExtension[] {
    const priority = (e: TrafficExtension) => e.spec?.priority ?? MIN_INT32;
    const rootLast = (e: TrafficExtension) => (namespaceOf(e) === proxy.configNamespace ? 0 : 1);
    return this.trafficExtensions
      .forWorkload(policyWorkload(proxy))
      .sort(
        (a, b) =>
          priority(b) - priority(a) ||
          rootLast(a) - rootLast(b) ||
          creationTime(a) - creationTime(b) ||
          compareStrings(a.metadata.name ?? "", b.metadata.name ?? ""),
      );
  }

  /** EnvoyFilters patching the proxy's config, in patch order. */
  /** The EnvoyFilters of a proxy; a waypoint takes only those whose targetRefs name it (Istio's policy matcher). */
  envoyFiltersFor(proxy: Workload & Pick<ProxyNode, "type">): EnvoyFilter[] {
    return this.envoyFilters.forProxy(
      proxy.type === "waypoint" ? waypointPolicyWorkload(proxy, undefined) : policyWorkload(proxy),
    );
  }
}

/** istiod's priority of a plugin without one (math.MinInt32). */
const MIN_INT32 = -2147483648;

function policyWorkload(proxy: Workload) {
  return { namespace: proxy.configNamespace, labels: proxy.labels };
}

function waypointPolicyWorkload(proxy: Workload, service: Service | undefined): PolicyWorkload {
  const target = service && { name: service.objectName, namespace: service.namespace, registry: service.registry };
  return { ...policyWorkload(proxy), waypoint: { service: target } };
}

function groupByKind(configs: readonly ConfigObject[]): KindConfigs {
  const kindOf = new Map<string, PushKind>(Object.entries(PUSH_KINDS).map(([k, v]) => [v, k as PushKind]));
  const out = new Map<PushKind, ConfigObject[]>();
  for (const config of configs) {
    const kind = kindOf.get(kindKey(parseApiVersion(config.apiVersion).group, config.kind));
    if (!kind) continue;
    const list = out.get(kind);
    if (list) list.push(config);
    else out.set(kind, [config]);
  }
  return out;
}
