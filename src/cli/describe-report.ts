// The text of `sluice x describe pod|service`, laid out as istioctl's describe prints it, from the
// state of config files (store → registry → push context).
import type { ConfigObject, MeshConfig } from "../config/index.ts";
import type { VirtualService } from "../config/types/index.ts";
import { labelsContain } from "../krt/index.ts";
import {
  type ConsolidatedDestinationRule,
  hostsMatch,
  MESH_GATEWAY,
  type PushSnapshot,
  pushSnapshot,
} from "../model/index.ts";
import type { Service } from "../registry/index.ts";
import type { DescribeTarget } from "./describe.ts";
import { loadState } from "./translate-state.ts";

const SEPARATOR = "--------------------";
const INGRESS_LABEL = "istio";
const INGRESS_VALUE = "ingressgateway";

interface PodSpec {
  containers?: { name?: string; ports?: { containerPort?: number; name?: string }[] }[];
}
interface PodStatus {
  podIP?: string;
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

/** The pod's container ports as istioctl lists them: `9080 (productpage), 15090 (istio-proxy)`. */
function podPorts(pod: Pod): string {
  return (pod.spec?.containers ?? [])
    .flatMap((c) => (c.ports ?? []).map((p) => `${p.containerPort} (${c.name ?? ""})`))
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
  const [first, ...more] = rules;
  if (!first) return { lines: [], matchingSubsets, nonMatchingSubsets };
  const rule = first.rule;
  const lines = [`DestinationRule: ${rule.metadata.name} for "${rule.spec?.host ?? service.hostname}"`];
  for (const subset of rule.spec?.subsets ?? []) {
    const set = labelsContain(workload.labels, subset.labels ?? {}) ? matchingSubsets : nonMatchingSubsets;
    set.add(subset.name);
  }
  if (matchingSubsets.size > 0) lines.push(`   Matching subsets: ${[...matchingSubsets].join(",")}`);
  if (nonMatchingSubsets.size > 0) lines.push(`      (Non-matching subsets ${[...nonMatchingSubsets].join(",")})`);
  if ((rule.spec?.subsets ?? []).length === 0) lines.push("   No subsets");
  const tlsMode = rule.spec?.trafficPolicy?.tls?.mode;
  lines.push(tlsMode ? `   Traffic Policy TLS Mode: ${tlsMode}` : "   No Traffic Policy");
  lines.push(
    more.length > 0 ? `   ${more.length} additional destination rule(s)` : "   No additional destination rules",
  );
  return { lines, matchingSubsets, nonMatchingSubsets };
}

/** A route's match conditions, compactly (`uri prefix /api, headers end-user exact jason`). */
function matchText(match: Record<string, unknown>): string {
  return Object.entries(match)
    .map(([field, value]) => `${field} ${JSON.stringify(value)}`)
    .join(", ");
}

/**
 * The VirtualService section (istioctl's printVirtualService): each HTTP route with a destination
 * reaching the workload (the service, and a subset the workload is in or none), by its match or weight;
 * destinations elsewhere counted, those to non-matching subsets of the service named.
 */
function virtualServiceLines(
  vs: VirtualService,
  service: Service,
  matchingSubsets: ReadonlySet<string>,
  nonMatchingSubsets: ReadonlySet<string>,
): string[] {
  const lines = [`VirtualService: ${vs.metadata.name}`];
  let elsewhere = 0;
  const unreached: string[] = [];
  for (const http of vs.spec?.http ?? []) {
    const condition = http.match?.length
      ? `when ${http.match.map((m) => matchText(m as Record<string, unknown>)).join(" or ")}`
      : "(everything)";
    for (const route of http.route ?? []) {
      const dest = route.destination;
      if (!hostsMatch(dest.host, service.hostname)) {
        elsewhere++;
        continue;
      }
      if (dest.subset !== undefined && !matchingSubsets.has(dest.subset)) {
        elsewhere++;
        if (nonMatchingSubsets.has(dest.subset))
          unreached.push(`Route to non-matching subset ${dest.subset} for ${condition}`);
        else unreached.push(`Route to UNKNOWN subset ${dest.subset}; check DestinationRule ${service.name}`);
        continue;
      }
      const weight = (http.route ?? []).length > 1 ? `Weight ${route.weight ?? 0}%` : "Weight 100%";
      lines.push(http.match?.length ? `   ${weight} ${condition}` : `   ${weight}`);
    }
  }
  if (elsewhere > 0) lines.push(`   ${elsewhere} additional destination(s) that will not reach this pod`);
  for (const line of unreached) lines.push(`      ${line}`);
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
  for (const vs of virtualServices)
    lines.push(...virtualServiceLines(vs, service, dr.matchingSubsets, dr.nonMatchingSubsets));
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

export type DescribeResult = { text: string; problems?: undefined } | { problems: string[]; text?: undefined };

/** istioctl's describe output for the pod or service `name` in `namespace`, from the config files at `paths`. */
export function describeFromFiles(
  paths: string[],
  target: DescribeTarget,
  name: string,
  namespace: string,
  options: { mesh: MeshConfig; domainSuffix: string },
): DescribeResult {
  const loaded = loadState(paths, options.mesh, options.domainSuffix);
  if (!loaded.state) return { problems: loaded.problems };
  const objects = loaded.state.store.list().map((s) => s.object);
  const snapshot = pushSnapshot(loaded.state.push);
  const allPods = pods(objects);
  const ingressNote = allPods.some((p) => p.metadata.labels?.[INGRESS_LABEL] === INGRESS_VALUE)
    ? []
    : ["Skipping Gateway information (no ingress gateway pods)"];

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
    if (ports !== "") lines.push(`   Pod Ports: ${ports}`);
    if (services.size === 0) lines.push("Suggestion: add a Service whose selector matches the pod's labels");
    for (const service of services.values()) lines.push(SEPARATOR, ...serviceLines(snapshot, service, workload, pod));
    lines.push(SEPARATOR, ...policyLines(snapshot, workload), ...ingressNote);
    return { text: `${lines.join("\n")}\n` };
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
  else lines.push("No pods in the files match the service's selector");
  lines.push(SEPARATOR, ...policyLines(snapshot, workload), ...ingressNote);
  return { text: `${lines.join("\n")}\n` };
}
