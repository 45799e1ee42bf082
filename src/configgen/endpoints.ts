// A proxy's load assignments (Istio's EndpointBuilder): one ClusterLoadAssignment per outbound cluster
// name, read through the proxy's scope, DestinationRule and endpoint view; assignments proxies share are cached.

import type { endpoint } from "../api/index.ts";
import { TypeUrl } from "../api/index.ts";
import type { MeshConfig } from "../config/index.ts";
import type { Labels } from "../krt/index.ts";
import type {
  ConsolidatedDestinationRule,
  MeshPush,
  PeerAuthenticationIndex,
  ProxyNode,
  PushSnapshot,
  SidecarScope,
} from "../model/index.ts";
import { hostsMatch } from "../model/index.ts";
import {
  effectiveTrafficPolicy,
  parseClusterName,
  sniDnatClusterName,
  supportsDrainingEndpoints,
} from "../networking/cluster/index.ts";
import { buildClusterLoadAssignment, localityLbSetting } from "../networking/endpoint/index.ts";
import type { EndpointLookup, Service, ServiceEndpoint } from "../registry/index.ts";
import { type MapTable, type Memos, mapTable, weakTable } from "../util/index.ts";
import { KeyFormat } from "./cache/keys.ts";
import { resourceTable, type XdsCache } from "./cache/xds-cache.ts";
import {
  appliedRule,
  type EndpointView,
  endpointView,
  failoverPriorityLabelNames,
  labelValues,
  type ScopeTraits,
  scopeTraits,
} from "./proxy-view.ts";

interface EdsClusterName {
  port: number;
  subset: string;
  hostname: string;
  sniDnat: boolean;
  /** A waypoint's `inbound-vip|…` cluster (its subset without the `http/` or `tcp/` of the name). */
  inboundVip: boolean;
}

// Parsed names (null: not an outbound cluster), as every proxy asks for the same ones; emptied when full.
const PARSED_NAMES: MapTable<string, EdsClusterName | null> = mapTable("eds/parsedNames");
const MAX_PARSED_NAMES = 100_000;

export function parseEdsClusterName(memos: Memos, name: string): EdsClusterName | undefined {
  const parsedNames = memos.map(PARSED_NAMES);
  let parsed = parsedNames.get(name);
  if (parsed === undefined) {
    if (parsedNames.size >= MAX_PARSED_NAMES) parsedNames.clear();
    parsed = parseUncached(memos, name) ?? null;
    parsedNames.set(name, parsed);
  }
  return parsed ?? undefined;
}

/**
 * `outbound|port|subset|host`, the SNI-DNAT form `outbound_.port_.subset_.host`, or a waypoint's
 * `inbound-vip|port|http/subset|host` (Istio's ParseSubsetKey).
 */
function parseUncached(memos: Memos, name: string): EdsClusterName | undefined {
  if (name.startsWith("outbound_.")) {
    const [, port, subset, ...host] = name.split("_.");
    const hostname = host.join("_.");
    if (!/^\d+$/.test(port ?? "") || sniDnatClusterName(memos, Number(port), subset ?? "", hostname) !== name)
      return undefined;
    return { port: Number(port), subset: subset ?? "", hostname, sniDnat: true, inboundVip: false };
  }
  const parsed = parseClusterName(name);
  if (parsed?.direction === "inbound-vip") {
    const subset = parsed.subset.replace(/^(http|tcp)(\/|$)/, "");
    return { port: parsed.port, subset, hostname: parsed.hostname, sniDnat: false, inboundVip: true };
  }
  if (parsed?.direction !== "outbound") return undefined;
  // A literal, not `{ ...parsed, sniDnat }`: each would get a hidden class of its own (util/copy-with.ts).
  return { port: parsed.port, subset: parsed.subset, hostname: parsed.hostname, sniDnat: false, inboundVip: false };
}

/**
 * Whether the mesh keeps `hostname` cluster-local (Istio's ClusterLocalProvider): kube-system services by
 * default, then MeshConfig serviceSettings in order, a later match overriding an earlier one.
 */
function isClusterLocal(mesh: MeshConfig, hostname: string, domainSuffix: string): boolean {
  let local = hostsMatch(`*.kube-system.svc.${domainSuffix}`, hostname);
  for (const { hosts = [], settings } of mesh.serviceSettings ?? []) {
    if (hosts.some((h) => hostsMatch(h, hostname))) local = settings?.clusterLocal ?? false;
  }
  return local;
}

// Istio's mtlsChecker, answered once per push for each labels, workload namespace and port (Istio's
// peerAuthDisabledMTLS keys by labels and port): the endpoints of a workload, or of a ServiceEntry,
// share those, and the index's answer costs microseconds per endpoint.
const MTLS_DISABLED = weakTable<MeshPush, Map<string, Map<string, boolean>>>("eds/mtlsDisabledByPush");
// Label sets as key parts (one string per labels object, whose hash is computed once); the registry's
// endpoints keep their labels objects across pushes. The Pods of a workload have equal labels: one
// string for them all (10,000 Pods of 1,000 services held 10,000 of ~240 bytes).
const LABEL_KEYS = weakTable<Labels, string>("eds/labelKeys");
const LABEL_KEY_STRINGS = mapTable<string, string>("eds/labelKeyStrings");
/** Label keys kept at most; past it they are dropped (a rollout's Pods bring new label sets). */
const MAX_LABEL_KEY_STRINGS = 10_000;

function peerAuthenticationDisablesMtls(memos: Memos, push: MeshPush): (ep: ServiceEndpoint) => boolean {
  const index = push.snapshot.peerAuthentications;
  const mtlsDisabledByPush = memos.weak(MTLS_DISABLED);
  const labelKeys = memos.weak(LABEL_KEYS);
  const labelKeyStrings = memos.map(LABEL_KEY_STRINGS);
  let answers = mtlsDisabledByPush.get(push);
  if (!answers) {
    answers = new Map();
    mtlsDisabledByPush.set(push, answers);
  }
  const byLabels = answers;
  return (ep) => {
    let labels = labelKeys.get(ep.labels);
    if (labels === undefined) {
      const made = JSON.stringify(ep.labels);
      labels = labelKeyStrings.get(made);
      if (labels === undefined) {
        if (labelKeyStrings.size >= MAX_LABEL_KEY_STRINGS) labelKeyStrings.clear();
        labelKeyStrings.set(made, made);
        labels = made;
      }
      labelKeys.set(ep.labels, labels);
    }
    let byPort = byLabels.get(labels);
    if (!byPort) {
      byPort = new Map();
      byLabels.set(labels, byPort);
    }
    const port = `${ep.workloadNamespace}/${ep.port}`;
    let disabled = byPort.get(port);
    if (disabled === undefined) {
      disabled = index.mtlsMode(ep.workloadNamespace, ep.labels, ep.port) === "DISABLE";
      byPort.set(port, disabled);
    }
    return disabled;
  };
}

/** Everything a load assignment reads. */
interface AssignmentKey {
  clusterName: string;
  /** The namespace of the service the proxy's scope sees for the cluster's host. */
  serviceNamespace: string | undefined;
  /** The sources of the DestinationRule the proxy applies to the host. */
  ruleSources: readonly string[] | undefined;
  endpointView: EndpointView;
  /** The proxy labels failoverPriority compares endpoints with; see failoverPriorityLabels. */
  failoverPriorityLabels: readonly unknown[] | undefined;
  /** Of a waypoint's inbound VIP cluster, which endpoints take HBONE (the ambient index says so, live). */
  tunnelEndpoints: readonly boolean[] | undefined;
  domainSuffix: string;
  service: Service | undefined;
  rule: ConsolidatedDestinationRule | undefined;
  mesh: MeshConfig;
  serviceEndpoints: readonly ServiceEndpoint[];
  peerAuthentications: PeerAuthenticationIndex;
  networkGateways: PushSnapshot["networkGateways"];
}

// Assignments shared by every proxy that sees the cluster the same way, across pushes while their inputs hold.
const ASSIGNMENTS = resourceTable<endpoint.ClusterLoadAssignment, AssignmentKey>({
  name: "eds/assignments",
  typeUrl: TypeUrl.Endpoint,
  key: {
    clusterName: "value",
    serviceNamespace: "value",
    ruleSources: "value",
    endpointView: "text",
    failoverPriorityLabels: "value",
    tunnelEndpoints: "value",
    domainSuffix: "value",
    service: "object",
    rule: "object",
    mesh: "object",
    serviceEndpoints: "object",
    peerAuthentications: "object",
    networkGateways: "object",
  },
  resources: (cla) => [{ name: cla.clusterName, resource: cla }],
});

/**
 * The proxy labels failoverPriority compares endpoints with (Istio's GetFailoverPriorityLabels), as a
 * key part: undefined without failoverPriority; whether the proxy has labels at all matters too.
 */
function failoverPriorityLabels(
  proxy: ProxyNode,
  failoverPriority: readonly string[] | undefined,
): unknown[] | undefined {
  if (!failoverPriority?.length) return undefined;
  const labels = failoverPriority.map((entry) => proxy.labels[entry.split("=")[0]] ?? null);
  return [Object.keys(proxy.labels).length > 0, ...labels];
}

/** What the assignment keys read of the proxy, computed once per proxy. */
export interface ProxyEndpointView {
  scope: SidecarScope;
  endpointView: EndpointView;
}

function proxyEndpointView(memos: Memos, push: MeshPush, proxy: ProxyNode): ProxyEndpointView {
  return { scope: push.snapshot.sidecarScope(proxy), endpointView: endpointView(memos, proxy) };
}

/** The assignment of one cluster for the proxy; `{cluster_name}` alone when it has no service in its scope. */
export function buildLoadAssignment(
  push: MeshPush,
  proxy: ProxyNode,
  endpoints: EndpointLookup,
  clusterName: string,
  cache: XdsCache,
): endpoint.ClusterLoadAssignment {
  return loadAssignment(cache, push, proxy, proxyEndpointView(cache, push, proxy), endpoints, clusterName);
}

export function loadAssignment(
  cache: XdsCache,
  push: MeshPush,
  proxy: ProxyNode,
  { scope, endpointView }: ProxyEndpointView,
  endpoints: EndpointLookup,
  clusterName: string,
): endpoint.ClusterLoadAssignment {
  const snap = push.snapshot;
  const parsed = parseEdsClusterName(cache, clusterName);
  const service = parsed && scope.service(parsed.hostname);
  const rule = parsed && scope.destinationRule("outbound", proxy.labels, parsed.hostname);
  const spec = rule && appliedRule(rule).spec;
  const policy = parsed && effectiveTrafficPolicy(spec, parsed.port, parsed.subset);
  const failoverPriority = localityLbSetting(snap.mesh, policy?.loadBalancer?.localityLbSetting)?.failoverPriority;
  const serviceEndpoints =
    parsed && service ? endpoints.endpointsFor(service.hostname, parsed.port, service.namespace) : [];
  const tunnelEndpoints = parsed?.inboundVip ? serviceEndpoints.map((ep) => snap.supportsTunnel(ep)) : undefined;
  const key: AssignmentKey = {
    clusterName,
    serviceNamespace: service?.namespace,
    ruleSources: rule?.from,
    endpointView,
    failoverPriorityLabels: failoverPriorityLabels(proxy, failoverPriority),
    tunnelEndpoints,
    domainSuffix: snap.domainSuffix,
    service,
    rule,
    mesh: snap.mesh,
    serviceEndpoints,
    peerAuthentications: snap.peerAuthentications,
    networkGateways: snap.networkGateways,
  };
  return cache.resources(ASSIGNMENTS).get(push, key, (status) => {
    if (!parsed || !service)
      return buildClusterLoadAssignment({ clusterName, port: 0, endpoints: [], proxy, mesh: snap.mesh, memos: cache });
    const assignment = buildClusterLoadAssignment({
      clusterName,
      port: parsed.port,
      endpoints: serviceEndpoints,
      subsetLabels: spec?.subsets?.find((s) => s.name === parsed.subset)?.labels,
      proxy,
      mesh: snap.mesh,
      policy,
      mtlsCapableOnly: parsed.sniDnat,
      tunnel: tunnelEndpoints && tunnelTest(serviceEndpoints, tunnelEndpoints),
      // Istio's mtlsChecker: the endpoint's own workload may turn mTLS off for its port.
      peerAuthenticationDisabled: peerAuthenticationDisablesMtls(cache, push),
      includeDraining: supportsDrainingEndpoints(service),
      // Endpoints on other networks than the proxy's go through their networks' gateways; the cache key
      // holds the proxy's network (endpointView), and the gateways are the push's own.
      networkGateways: snap.networkGateways,
      clusterLocal: isClusterLocal(snap.mesh, service.hostname, snap.domainSuffix),
      memos: cache,
    });
    if (assignment.endpoints.every((l) => l.lbEndpoints.length === 0))
      status.add("pilot_eds_no_instances", clusterName);
    return assignment;
  });
}

/** Whether an endpoint of `endpoints` takes HBONE, as `tunnels` says by position. */
function tunnelTest(
  endpoints: readonly ServiceEndpoint[],
  tunnels: readonly boolean[],
): (ep: ServiceEndpoint) => boolean {
  const tunnelled = new Set(endpoints.filter((_, i) => tunnels[i]));
  return (ep) => tunnelled.has(ep);
}

/** What the load assignments read of the proxy besides its scope; see assignmentClassKey. */
interface AssignmentClassKey {
  endpointView: EndpointView;
  /** The values of the labels the scope's DestinationRule workloadSelectors name. */
  selectorLabelValues: readonly (string | null)[];
  /** With failoverPriority: whether the proxy has labels, and the values of those it names. */
  failoverLabels: readonly unknown[] | undefined;
}

const ASSIGNMENT_CLASS_KEY = new KeyFormat<AssignmentClassKey>({
  endpointView: "text",
  selectorLabelValues: "value",
  failoverLabels: "value",
});

/** What a proxy's class key was written from, and the key. */
interface WrittenClassKey {
  traits: ScopeTraits;
  mesh: MeshConfig;
  view: EndpointView;
  labels: ProxyNode["labels"];
  key: string;
}

// Asked once per proxy in every push that builds its assignments (200 proxies of an endpoint change
// in the scoped 2,000 bench); the inputs are objects replaced, never changed in place, so the same
// ones give the same key without writing it again.
const WRITTEN_CLASS_KEYS = weakTable<ProxyNode, WrittenClassKey>("eds/classKeys");

/**
 * What the load assignments read of the proxy besides its scope: its endpoint view, the labels
 * DestinationRule selectors match, and with failoverPriority (the scope's rules' or the mesh's) the
 * labels it names and whether the proxy has labels at all.
 */
export function assignmentClassKey(cache: XdsCache, push: MeshPush, scope: SidecarScope, proxy: ProxyNode): string {
  const traits = scopeTraits(cache, scope);
  const { mesh } = push.snapshot;
  const view = endpointView(cache, proxy);
  const { labels } = proxy;
  const classKeys = cache.weak(WRITTEN_CLASS_KEYS);
  const written = classKeys.get(proxy);
  if (
    written &&
    written.traits === traits &&
    written.mesh === mesh &&
    written.view === view &&
    written.labels === labels
  ) {
    return written.key;
  }
  const meshFailoverPriority = localityLbSetting(mesh, undefined)?.failoverPriority ?? [];
  const failoverLabels =
    traits.failoverPriorityLabels || meshFailoverPriority.length > 0
      ? failoverPriorityLabelNames([...(traits.failoverPriorityLabels ?? []), ...meshFailoverPriority])
      : undefined;
  const parts: AssignmentClassKey = {
    endpointView: view,
    selectorLabelValues: labelValues(labels, traits.selectorLabels),
    failoverLabels: failoverLabels
      ? [Object.keys(labels).length > 0, ...labelValues(labels, failoverLabels)]
      : undefined,
  };
  const key = ASSIGNMENT_CLASS_KEY.text(parts, cache);
  classKeys.set(proxy, { traits, mesh, view, labels, key });
  return key;
}
