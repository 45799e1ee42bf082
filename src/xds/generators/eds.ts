// EDS: one ClusterLoadAssignment per subscribed cluster (Istio's pilot/pkg/xds/eds.go). A full push
// answers every subscribed name; an incremental (endpoint) push answers only the clusters of the
// hostnames it names, which SotW EDS allows.
import type { endpoint } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { Labels } from "../../krt/index.ts";
import type { MeshPush, ProxyNode, PushRequest, PushSnapshot, SidecarScope } from "../../model/index.ts";
import { hostsMatch } from "../../model/index.ts";
import {
  effectiveTrafficPolicy,
  parseClusterName,
  sniDnatClusterName,
  supportsDrainingEndpoints,
} from "../../networking/cluster/index.ts";
import { buildClusterLoadAssignment, localityLbSetting } from "../../networking/endpoint/index.ts";
import type { EndpointLookup, ServiceEndpoint } from "../../registry/index.ts";
import { buildNamed, type Generator, type ResourceError, type XdsResource } from "../generator.ts";
import { KIND } from "../pipeline/classify.ts";
import { TypeUrl } from "../types.ts";
import {
  appliedRule,
  endpointViewKey,
  failoverPriorityLabelNames,
  labelValuesKey,
  proxyClassMemo,
  scopeTraits,
} from "./cds.ts";
import { edsNeedsPush } from "./cds-needs-push.ts";
import { resourceCache } from "./push-cache.ts";

interface EdsClusterName {
  port: number;
  subset: string;
  hostname: string;
  sniDnat: boolean;
}

// Parsed names (null: not an outbound cluster), as every proxy asks for the same ones; emptied when full.
const parsedNames = new Map<string, EdsClusterName | null>();
const MAX_PARSED_NAMES = 100_000;

function parseEdsClusterName(name: string): EdsClusterName | undefined {
  let parsed = parsedNames.get(name);
  if (parsed === undefined) {
    if (parsedNames.size >= MAX_PARSED_NAMES) parsedNames.clear();
    parsed = parseUncached(name) ?? null;
    parsedNames.set(name, parsed);
  }
  return parsed ?? undefined;
}

/** `outbound|port|subset|host` or the SNI-DNAT form `outbound_.port_.subset_.host` (Istio's ParseSubsetKey). */
function parseUncached(name: string): EdsClusterName | undefined {
  if (name.startsWith("outbound_.")) {
    const [, port, subset, ...host] = name.split("_.");
    const hostname = host.join("_.");
    if (!/^\d+$/.test(port ?? "") || sniDnatClusterName(Number(port), subset ?? "", hostname) !== name)
      return undefined;
    return { port: Number(port), subset: subset ?? "", hostname, sniDnat: true };
  }
  const parsed = parseClusterName(name);
  return parsed?.direction === "outbound" ? { ...parsed, sniDnat: false } : undefined;
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
const mtlsDisabledByPush = new WeakMap<MeshPush, Map<string, Map<string, boolean>>>();
// Label sets as key parts (one string per labels object, whose hash is computed once); the registry's
// endpoints keep their labels objects across pushes.
const labelKeys = new WeakMap<Labels, string>();

function peerAuthenticationDisablesMtls(push: MeshPush): (ep: ServiceEndpoint) => boolean {
  const index = push.snapshot.peerAuthentications;
  let answers = mtlsDisabledByPush.get(push);
  if (!answers) {
    answers = new Map();
    mtlsDisabledByPush.set(push, answers);
  }
  const byLabels = answers;
  return (ep) => {
    let labels = labelKeys.get(ep.labels);
    if (labels === undefined) {
      labels = JSON.stringify(ep.labels);
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

// Assignments shared by every proxy that sees the cluster the same way, across pushes while their inputs hold.
const assignments = resourceCache<endpoint.ClusterLoadAssignment>(TypeUrl.Endpoint, (cla) => [
  { name: cla.clusterName, resource: cla },
]);

/**
 * The proxy labels failoverPriority compares endpoints with (Istio's GetFailoverPriorityLabels), as a
 * key part: "" without failoverPriority; whether the proxy has labels at all matters too.
 */
function failoverPriorityLabels(proxy: ProxyNode, failoverPriority: readonly string[] | undefined): string {
  if (!failoverPriority?.length) return "";
  const labels = failoverPriority.map((entry) => proxy.labels[entry.split("=")[0]] ?? null);
  return JSON.stringify([Object.keys(proxy.labels).length > 0, ...labels]);
}

/** What the assignment keys read of the proxy, computed once per proxy. */
interface ProxyEndpointView {
  scope: SidecarScope;
  endpointView: string;
}

function proxyEndpointView(push: MeshPush, proxy: ProxyNode): ProxyEndpointView {
  return { scope: push.snapshot.sidecarScope(proxy), endpointView: endpointViewKey(proxy) };
}

/** The assignment of one cluster for the proxy; `{cluster_name}` alone when it has no service in its scope. */
export function buildLoadAssignment(
  push: MeshPush,
  proxy: ProxyNode,
  endpoints: EndpointLookup,
  clusterName: string,
): endpoint.ClusterLoadAssignment {
  return loadAssignment(push, proxy, proxyEndpointView(push, proxy), endpoints, clusterName);
}

function loadAssignment(
  push: MeshPush,
  proxy: ProxyNode,
  { scope, endpointView }: ProxyEndpointView,
  endpoints: EndpointLookup,
  clusterName: string,
): endpoint.ClusterLoadAssignment {
  const snap = push.snapshot;
  const parsed = parseEdsClusterName(clusterName);
  const service = parsed && scope.service(parsed.hostname);
  const rule = parsed && scope.destinationRule("outbound", proxy.labels, parsed.hostname);
  const spec = rule && appliedRule(rule).spec;
  const policy = parsed && effectiveTrafficPolicy(spec, parsed.port, parsed.subset);
  const failoverPriority = localityLbSetting(snap.mesh, policy?.loadBalancer?.localityLbSetting)?.failoverPriority;
  const key = [
    clusterName,
    service?.namespace,
    rule?.from.join(","),
    endpointView,
    failoverPriorityLabels(proxy, failoverPriority),
    snap.domainSuffix,
  ].join("|");
  const serviceEndpoints =
    parsed && service ? endpoints.endpointsFor(service.hostname, parsed.port, service.namespace) : [];
  const inputs = [service, rule, snap.mesh, serviceEndpoints, snap.peerAuthentications, snap.networkGateways];
  return assignments(push, key, inputs, (status) => {
    if (!parsed || !service)
      return buildClusterLoadAssignment({ clusterName, port: 0, endpoints: [], proxy, mesh: snap.mesh });
    const assignment = buildClusterLoadAssignment({
      clusterName,
      port: parsed.port,
      endpoints: serviceEndpoints,
      subsetLabels: spec?.subsets?.find((s) => s.name === parsed.subset)?.labels,
      proxy,
      mesh: snap.mesh,
      policy,
      mtlsCapableOnly: parsed.sniDnat,
      // Istio's mtlsChecker: the endpoint's own workload may turn mTLS off for its port.
      peerAuthenticationDisabled: peerAuthenticationDisablesMtls(push),
      includeDraining: supportsDrainingEndpoints(service),
      // Endpoints on other networks than the proxy's go through their networks' gateways; the cache key
      // holds the proxy's network (endpointViewKey), and the gateways are the push's own.
      networkGateways: snap.networkGateways,
      clusterLocal: isClusterLocal(snap.mesh, service.hostname, snap.domainSuffix),
    });
    if (assignment.endpoints.every((l) => l.lbEndpoints.length === 0))
      status.add("pilot_eds_no_instances", clusterName);
    return assignment;
  });
}

/** The hostnames an incremental push names (endpoint pushes key services by hostname). */
export function changedHostnames(req: PushRequest): Set<string> {
  const hosts = new Set<string>();
  for (const key of req.configsUpdated.values()) if (key.kind === KIND.serviceEntry) hosts.add(key.name);
  return hosts;
}

// Per push and proxy class, the assignments answering each list of names (in the order asked), and
// the names whose assignment threw.
const classResponses = proxyClassMemo<Map<string, { resources: XdsResource[]; errors: ResourceError[] }>>();

/**
 * What the load assignments read of the proxy besides its scope: its endpoint view, the labels
 * DestinationRule selectors match, and with failoverPriority (the scope's rules' or the mesh's) the
 * labels it names and whether the proxy has labels at all.
 */
function assignmentClassKey(push: MeshPush, scope: SidecarScope, proxy: ProxyNode): string {
  const traits = scopeTraits(scope);
  const meshFailoverPriority = localityLbSetting(push.snapshot.mesh, undefined)?.failoverPriority ?? [];
  const failoverLabels =
    traits.failoverPriorityLabels || meshFailoverPriority.length > 0
      ? failoverPriorityLabelNames([...(traits.failoverPriorityLabels ?? []), ...meshFailoverPriority])
      : undefined;
  return [
    endpointViewKey(proxy),
    labelValuesKey(proxy.labels, traits.selectorLabels),
    failoverLabels ? `${Object.keys(proxy.labels).length > 0}${labelValuesKey(proxy.labels, failoverLabels)}` : "",
  ].join("|");
}

export function edsGenerator(endpoints: EndpointLookup): Generator<PushSnapshot> {
  return {
    generate(proxy, watched, req) {
      if (!edsNeedsPush(req)) return undefined;
      let names = [...watched.resourceNames];
      if (!req.full) {
        const changed = changedHostnames(req);
        names = names.filter((n) => {
          const host = parseEdsClusterName(n)?.hostname;
          return host !== undefined && changed.has(host);
        });
        if (names.length === 0) return undefined;
      }
      // Proxies of a class asking for the same names in the same order get the same resources array.
      const scope = req.push.snapshot.sidecarScope(proxy);
      const classKey = assignmentClassKey(req.push, scope, proxy);
      const byNames = classResponses(req.push, endpoints, scope, classKey, () => new Map());
      const namesKey = JSON.stringify(names);
      let answer = byNames.get(namesKey);
      if (!answer) {
        const view = { scope, endpointView: endpointViewKey(proxy) };
        // An assignment that throws is left out (an error of the result); the others go.
        answer = buildNamed(names, (name) => loadAssignment(req.push, proxy, view, endpoints, name));
        byNames.set(namesKey, answer);
      }
      return { resources: answer.resources, errors: answer.errors, logDetails: { incremental: !req.full } };
    },
  };
}
