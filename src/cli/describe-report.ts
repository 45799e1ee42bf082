// The text of `sluice x describe pod|service`, laid out as istioctl's describe prints it, from the
// state of config files or of a live cluster (store → registry → push context).
import { readCluster } from "../analysis/cluster.ts";
import { type ConfigObject, KINDS, kindKey, loadMeshConfig, type MeshConfig } from "../config/index.ts";
import type {
  VirtualService,
  VirtualServiceHttp,
  VirtualServiceHttpMatch,
  VirtualServiceHttpMatchUri,
} from "../config/types/index.ts";
import { labelsContain } from "../krt/index.ts";
import { type ConsolidatedDestinationRule, hostsMatch, MESH_GATEWAY, type PushSnapshot } from "../model/index.ts";
import type { Service } from "../registry/index.ts";
import type { KubeClient } from "../sources/kube/index.ts";
import { cliLog } from "./log.ts";
import { type LoadResult, loadState } from "./translate-state.ts";

/** What `x describe` describes. */
export type DescribeTarget = "pod" | "service";

const SEPARATOR = "--------------------";
const INGRESS_LABEL = "istio";
const INGRESS_VALUE = "ingressgateway";

interface PodSpec {
  containers?: { name?: string; ports?: { containerPort?: number; name?: string; protocol?: string }[] }[];
}
interface PodStatus {
  podIP?: string;
  hostIP?: string;
}
type Pod = ConfigObject<PodSpec> & { status?: PodStatus };

/** The workload the describe looks at: a pod, or for a service without pods the service's selector. */
interface Workload {
  configNamespace: string;
  labels: Record<string, string>;
}

function pods(objects: readonly ConfigObject[]): Pod[] {
  return objects.filter((o): o is Pod => o.kind === "Pod" && o.apiVersion === "v1");
}

/** The pod's container ports as istioctl lists them: `9080 (productpage), 53/UDP (dns)`. */
function podPorts(pod: Pod): string {
  return (pod.spec?.containers ?? [])
    .flatMap((c) =>
      (c.ports ?? []).map((p) => {
        // Kubernetes defaults the protocol to TCP, which istioctl leaves out.
        const protocol = p.protocol && p.protocol !== "TCP" ? `/${p.protocol}` : "";
        return `${p.containerPort}${protocol} (${c.name ?? ""})`;
      }),
    )
    .join(", ");
}

/** A service port's target on the pod: the number, or a named container port resolved. */
function targetPort(pod: Pod | undefined, target: number | string, port: number): string {
  if (typeof target === "number") return String(target === 0 ? port : target);
  for (const c of pod?.spec?.containers ?? []) {
    const named = c.ports?.find((p) => p.name === target);
    if (named?.containerPort !== undefined) return String(named.containerPort);
  }
  return target;
}

/** The DestinationRule section: which of its subsets select the workload, and its TLS mode. */
function destinationRuleLines(
  rules: readonly ConsolidatedDestinationRule[],
  service: Service,
  workload: Workload,
): { lines: string[]; matchingSubsets: Set<string>; nonMatchingSubsets: Set<string> } {
  const matchingSubsets = new Set<string>();
  const nonMatchingSubsets = new Set<string>();
  const rule = rules[0]?.rule;
  if (!rule) return { lines: [], matchingSubsets, nonMatchingSubsets };
  const lines = [`DestinationRule: ${rule.metadata.name} for "${rule.spec?.host ?? service.hostname}"`];
  for (const subset of rule.spec?.subsets ?? []) {
    const set = labelsContain(workload.labels, subset.labels ?? {}) ? matchingSubsets : nonMatchingSubsets;
    set.add(subset.name);
  }
  if (matchingSubsets.size + nonMatchingSubsets.size > 0) {
    if (matchingSubsets.size === 0) {
      lines.push(
        `   WARNING POD DOES NOT MATCH ANY SUBSETS.  (Non matching subsets ${[...nonMatchingSubsets].join(",")})`,
      );
    }
    lines.push(`   Matching subsets: ${[...matchingSubsets].join(",")}`);
    if (nonMatchingSubsets.size > 0) lines.push(`      (Non-matching subsets ${[...nonMatchingSubsets].join(",")})`);
  }
  const policy = rule.spec?.trafficPolicy;
  if (!policy) {
    lines.push("   No Traffic Policy");
  } else {
    if (policy.tls) lines.push(`   Traffic Policy TLS Mode: ${policy.tls.mode ?? "DISABLE"}`);
    const kinds = [
      ...(policy.loadBalancer ? ["load balancer"] : []),
      ...(policy.connectionPool ? ["connection pool"] : []),
      ...(policy.outlierDetection ? ["outlier detection"] : []),
    ];
    if (kinds.length > 0) lines.push(`   Policies: ${kinds.join("/")}`);
  }
  return { lines, matchingSubsets, nonMatchingSubsets };
}

/** A string match as istioctl shows it: the exact value, a prefix with `*`, else the match as JSON. */
function stringMatchText(match: VirtualServiceHttpMatchUri): string {
  if (match.exact !== undefined) return match.exact;
  if (match.prefix !== undefined) return `${match.prefix}*`;
  return JSON.stringify(match);
}

/** One HTTP match as istioctl renders it: `Match: /api* when headers are end-user=jason`. */
function matchText(match: VirtualServiceHttpMatch): string {
  let text = "Match: ";
  if (match.uri) text += `${stringMatchText(match.uri)}${match.ignoreUriCase ? " uncased" : ""}`;
  const headers = Object.entries(match.headers ?? {}).map(([name, value]) => `${name}=${stringMatchText(value)}`);
  if (headers.length > 0) text += ` when headers are ${headers.join("; ")}`;
  return text.trim();
}

/**
 * Whether an HTTP route sends traffic to the workload (a destination on the service, in a subset the
 * workload is in or none), with istioctl's facts about it: weighted destinations and the match
 * conditions, or, when it does not, why (destinations to subsets the workload is not in).
 */
function httpRouteFacts(
  http: VirtualServiceHttp,
  service: Service,
  matchingSubsets: ReadonlySet<string>,
  nonMatchingSubsets: ReadonlySet<string>,
  ruleName: string | undefined,
): { reaches: boolean; facts: string[] } {
  const facts: string[] = [];
  const mismatches: string[] = [];
  let reaches = false;
  const conditions = http.match?.length ? http.match.map(matchText).join(", ") : "everything";
  for (const { destination, weight = 0 } of http.route ?? []) {
    if (!hostsMatch(destination.host, service.hostname)) {
      facts.push(
        destination.subset === undefined
          ? `Route to host "${destination.host}" with weight ${weight}%`
          : `Route to ${destination.host} with invalid config`,
      );
      continue;
    }
    const subset = destination.subset;
    if (subset !== undefined && nonMatchingSubsets.has(subset)) {
      mismatches.push(`Route to non-matching subset ${subset} for (${conditions})`);
      continue;
    }
    if (subset !== undefined && !matchingSubsets.has(subset)) {
      mismatches.push(
        ruleName === undefined
          ? `Warning: Route to subset ${subset} but NO DESTINATION RULE defining subsets!`
          : `Warning: Route to UNKNOWN subset ${subset}; check DestinationRule ${ruleName}`,
      );
      continue;
    }
    reaches = true;
    if (weight > 0) {
      const to = subset === undefined ? "" : ` subset "${subset}"`;
      facts.push(`Route to host "${destination.host}"${to} with weight ${weight}%`);
    }
  }
  if (reaches) {
    const requestFacts = [...(http.fault ? [`Fault injection ${JSON.stringify(http.fault)}`] : [])];
    requestFacts.push(...(http.match ?? []).map(matchText));
    if (requestFacts.length > 0) facts.push(requestFacts.join(", "));
    return { reaches, facts };
  }
  return { reaches, facts: mismatches.length > 0 ? [...facts, ...mismatches] : facts };
}

/**
 * The VirtualService section (istioctl's printVirtualService): the facts of the HTTP and TCP routes
 * that reach the workload, then how many routes do not, or a warning when none does.
 */
function virtualServiceLines(
  vs: VirtualService,
  service: Service,
  matchingSubsets: ReadonlySet<string>,
  nonMatchingSubsets: ReadonlySet<string>,
  ruleName: string | undefined,
): string[] {
  const lines = [`VirtualService: ${vs.metadata.name}`];
  const http = vs.spec?.http ?? [];
  const tcp = vs.spec?.tcp ?? [];
  let reaching = 0;
  let facts = 0;
  const mismatchNotes: string[] = [];
  for (const route of http) {
    const result = httpRouteFacts(route, service, matchingSubsets, nonMatchingSubsets, ruleName);
    if (!result.reaches) {
      mismatchNotes.push(...result.facts);
      continue;
    }
    reaching++;
    facts += result.facts.length;
    lines.push(...result.facts.map((fact) => `   ${fact}`));
  }
  for (const route of tcp) {
    if (!(route.route ?? []).some((r) => hostsMatch(r.destination.host, service.hostname))) continue;
    reaching++;
    for (const match of route.match ?? []) {
      lines.push(`   ${JSON.stringify(match)}`);
      facts++;
    }
  }
  if (reaching === 0) {
    if (http.length > 0)
      lines.push(`   WARNING: No destinations match pod subsets (checked ${http.length} HTTP routes)`);
    if (tcp.length > 0) lines.push(`   WARNING: No destinations match pod subsets (checked ${tcp.length} TCP routes)`);
    lines.push(...mismatchNotes.map((note) => `      ${note}`));
    return lines;
  }
  const routes = http.length + (vs.spec?.tls ?? []).length + tcp.length;
  if (reaching < routes) {
    // Earlier routes may take the traffic these match, so the count is all istioctl can say.
    lines.push(`   ${routes - reaching} additional destination(s) that will not reach this pod`);
    if (facts === 0) lines.push(...mismatchNotes.map((note) => `      ${note}`));
    return lines;
  }
  if (facts === 0) {
    if (http.length > 0) lines.push(`   ${http.length} HTTP route(s)`);
    if (tcp.length > 0) lines.push(`   ${tcp.length} TCP route(s)`);
  }
  return lines;
}

/** The lines for one service of the workload: its ports, then DestinationRule and VirtualServices. */
function serviceLines(snapshot: PushSnapshot, service: Service, workload: Workload, pod: Pod | undefined): string[] {
  const lines = [`Service: ${service.name}`];
  for (const port of service.ports) {
    lines.push(
      `   Port: ${port.name} ${port.port}/${port.protocol} targets pod port ${targetPort(pod, port.targetPort, port.port)}`,
    );
  }
  const rules = snapshot.destinationRulesFor(workload.configNamespace, service);
  const dr = destinationRuleLines(rules, service, workload);
  lines.push(...dr.lines);
  const virtualServices = snapshot.virtualServicesForHost(workload.configNamespace, MESH_GATEWAY, service.hostname);
  const ruleName = rules[0]?.rule.metadata.name;
  for (const vs of virtualServices) {
    lines.push(...virtualServiceLines(vs, service, dr.matchingSubsets, dr.nonMatchingSubsets, ruleName));
  }
  return lines;
}

/**
 * istioctl's ingress section: for the first ingress gateway pod of the Istio namespace, the
 * VirtualServices bound to Gateways selecting it that route to one of `services`, each after the
 * gateway service's address ("Exposed on Ingress Gateway http://IP"), laid out as for the mesh.
 */
function ingressLines(
  snapshot: PushSnapshot,
  allPods: readonly Pod[],
  services: readonly Service[],
  workload: Workload,
  istioNamespace: string,
): string[] {
  const isIngress = (labels: Readonly<Record<string, string>> | undefined) => labels?.[INGRESS_LABEL] === INGRESS_VALUE;
  const gatewayPod = allPods.find((p) => p.metadata.namespace === istioNamespace && isIngress(p.metadata.labels));
  if (!gatewayPod) return ["Skipping Gateway information (no ingress gateway pods)"];
  const gatewayService = snapshot.services.all.find(
    (s) => s.registry === "Kubernetes" && s.namespace === istioNamespace && isIngress(s.labels),
  );
  if (!gatewayService) return ["Error: no ingress gateway service"];
  const address = gatewayService.externalAddresses[0] ?? gatewayPod.status?.hostIP ?? "unknown";
  // As istioctl, only the http2 port is shown; the http scheme's default port needs no suffix.
  const exposed = gatewayService.ports
    .filter((port) => port.name === "http2")
    .map((port) => `Exposed on Ingress Gateway http://${address}${port.port === 80 ? "" : `:${port.port}`}`);
  const podLabels = gatewayPod.metadata.labels ?? {};
  const gateways = snapshot.gateways.filter((g) => labelsContain(podLabels, g.spec?.selector ?? {}));
  const lines: string[] = [];
  for (const service of services) {
    const rules = snapshot.destinationRulesFor(workload.configNamespace, service);
    const dr = destinationRuleLines(rules, service, workload);
    for (const gateway of gateways) {
      const name = `${gateway.metadata.namespace}/${gateway.metadata.name}`;
      const routing = snapshot
        .virtualServicesForGateway(gateway.metadata.namespace ?? "", name)
        .filter((vs) =>
          (vs.spec?.http ?? []).some((h) =>
            (h.route ?? []).some((r) => hostsMatch(r.destination.host, service.hostname)),
          ),
        );
      for (const vs of routing) {
        lines.push(lines.length === 0 ? "" : SEPARATOR, ...exposed.flatMap((e) => ["", e]));
        lines.push(
          ...virtualServiceLines(vs, service, dr.matchingSubsets, dr.nonMatchingSubsets, rules[0]?.rule.metadata.name),
        );
      }
    }
  }
  return lines;
}

/** The workload's PeerAuthentication and AuthorizationPolicy lines. */
function policyLines(snapshot: PushSnapshot, workload: Workload): string[] {
  const effective = snapshot.effectiveMtls(workload);
  const lines = ["Effective PeerAuthentication:", `   Workload mTLS mode: ${effective.mode}`];
  for (const [port, mode] of [...effective.perPort].sort(([a], [b]) => a - b)) {
    lines.push(`   Port Level mTLS mode: ${port}: ${mode}`);
  }
  const applied = snapshot.peerAuthentications.forWorkload(workload.configNamespace, workload.labels);
  if (applied.length > 0) {
    lines.push(
      "Applied PeerAuthentication:",
      `   ${applied.map((pa) => `${pa.metadata.name}.${pa.metadata.namespace}`).join(", ")}`,
    );
  }
  const authz = snapshot.authorizationPoliciesFor(workload);
  if (authz.length > 0) {
    lines.push(
      "Applied AuthorizationPolicies:",
      ...authz.map((p) => `   ${p.metadata.name}.${p.metadata.namespace} (${p.spec?.action ?? "ALLOW"})`),
    );
  }
  return lines;
}

export type DescribeResult =
  | { text: string; warnings: string[]; problems?: undefined }
  | { problems: string[]; text?: undefined };

export interface DescribeOptions {
  domainSuffix: string;
  istioNamespace: string;
}

/** istioctl's describe output for the pod or service `name` in `namespace`, from the config files at `paths`. */
export function describeFromFiles(
  paths: string[],
  target: DescribeTarget,
  name: string,
  namespace: string,
  options: DescribeOptions & { mesh: MeshConfig },
): DescribeResult {
  return describeLoaded(loadState(paths, options.mesh, options.domainSuffix), target, name, namespace, options);
}

/** The kinds describe lists from a cluster: Istio's config and the objects services and workloads come from. */
const CLUSTER_KINDS: ReadonlySet<string> = new Set([
  ...KINDS.filter((k) => k.family === "istio").map((k) => kindKey(k.group, k.kind)),
  kindKey("", "Namespace"),
  kindKey("", "Service"),
  kindKey("", "Pod"),
  kindKey("discovery.k8s.io", "EndpointSlice"),
]);

/**
 * As describeFromFiles, from a live cluster's objects (istioctl's describe), with the objects of the
 * files at `paths` replacing the cluster's. The mesh config is `options.mesh`, else the cluster's.
 */
export async function describeFromCluster(
  client: KubeClient,
  paths: string[],
  target: DescribeTarget,
  name: string,
  namespace: string,
  options: DescribeOptions & { mesh?: MeshConfig },
): Promise<DescribeResult> {
  const cluster = await readCluster(client, CLUSTER_KINDS, options.istioNamespace, cliLog("kube"));
  let mesh = options.mesh;
  if (!mesh) {
    try {
      mesh = loadMeshConfig(cluster.meshConfig).mesh;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return { problems: [`ConfigMap ${options.istioNamespace}/istio: mesh: ${why}`] };
    }
  }
  const loaded = loadState(paths, mesh, options.domainSuffix, undefined, cluster.objects);
  return describeLoaded(loaded, target, name, namespace, options);
}

function describeLoaded(
  loaded: LoadResult,
  target: DescribeTarget,
  name: string,
  namespace: string,
  options: DescribeOptions,
): DescribeResult {
  if (!loaded.state) return { problems: loaded.problems };
  const warnings = loaded.warnings;
  const objects = loaded.state.store.list().map((s) => s.object);
  const snapshot = loaded.state.push.snapshot;
  const allPods = pods(objects);

  if (target === "pod") {
    const pod = allPods.find((p) => p.metadata.name === name && (p.metadata.namespace ?? "default") === namespace);
    if (!pod) return { problems: [`pods "${name}" not found in namespace ${namespace}`] };
    const workload = { configNamespace: namespace, labels: pod.metadata.labels ?? {} };
    const services = new Map<string, Service>();
    for (const t of snapshot.serviceTargets({
      ...workload,
      ipAddresses: pod.status?.podIP ? [pod.status.podIP] : [],
    })) {
      services.set(t.service.hostname, t.service);
    }
    const lines = [`Pod: ${name}`];
    const ports = podPorts(pod);
    lines.push(ports === "" ? "   Pod does not expose ports" : `   Pod Ports: ${ports}`);
    if (services.size === 0) lines.push("Suggestion: add a Service whose selector matches the pod's labels");
    for (const service of services.values()) lines.push(SEPARATOR, ...serviceLines(snapshot, service, workload, pod));
    lines.push(SEPARATOR, ...policyLines(snapshot, workload));
    lines.push(...ingressLines(snapshot, allPods, [...services.values()], workload, options.istioNamespace));
    return { text: `${lines.join("\n")}\n`, warnings };
  }

  const service = snapshot.services.all.find(
    (s) => s.registry === "Kubernetes" && s.name === name && s.namespace === namespace,
  );
  if (!service) return { problems: [`services "${name}" not found in namespace ${namespace}`] };
  // As istioctl, the service is described through one of its pods (the first selected one).
  const pod = allPods.find(
    (p) =>
      (p.metadata.namespace ?? "default") === namespace &&
      service.selector !== null &&
      Object.keys(service.selector).length > 0 &&
      labelsContain(p.metadata.labels ?? {}, service.selector),
  );
  const workload = { configNamespace: namespace, labels: pod?.metadata.labels ?? service.selector ?? {} };
  const lines = serviceLines(snapshot, service, workload, pod);
  if (pod) lines.push(`Pod: ${pod.metadata.name}`);
  else lines.push("No pods match the service's selector");
  lines.push(SEPARATOR, ...policyLines(snapshot, workload));
  lines.push(...ingressLines(snapshot, allPods, [service], workload, options.istioNamespace));
  return { text: `${lines.join("\n")}\n`, warnings };
}
