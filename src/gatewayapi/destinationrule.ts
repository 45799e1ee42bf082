// Backend policies (BackendTLSPolicy, XBackendTrafficPolicy, XBackend TLS) → one DestinationRule per
// (target, host), merged oldest policy first; plus the ancestor statuses those policies share.
import type { ConfigObject } from "../config/index.ts";
import { serviceSpecOf } from "../config/typed.ts";
import { type Condition, type ConditionSpec, setConditions } from "./conditions.ts";
import { extractRoot, objectValues } from "./credentials.ts";
import { GATEWAY_CONTROLLER, MESH_CONTROLLER } from "./gatewayclass.ts";
import { type ClusterObjects, type ConfigError, groupBy } from "./model.ts";
import { GENERATED_SUFFIX, PARENTS_ANNOTATION } from "./naming.ts";
import type { ParentRef } from "./parents.ts";
import { compareByCreation } from "./virtualservice.ts";

/** Istio's ClientTLSSettings in protobuf-JSON form. */
export interface ClientTls {
  mode: "SIMPLE";
  sni?: string;
  subjectAltNames?: string[];
  credentialName?: string;
}

export interface RetryBudget {
  percent?: number;
  budgetInterval: string;
  minRetryConcurrency: number;
}

/** One policy's settings for one target host. */
export interface BackendPolicy {
  source: ConfigObject;
  /** "Service", "ServiceEntry" or "XBackend". */
  targetKind: string;
  targetNamespace: string;
  targetName: string;
  host: string;
  sectionName?: string;
  port?: number;
  tls?: ClientTls;
  loadBalancer?: Record<string, never>;
  retryBudget?: RetryBudget;
}

interface PortTrafficPolicy {
  port: { number?: number };
  tls: ClientTls;
}

function targetPorts(policy: BackendPolicy, cluster: ClusterObjects): { name?: string; number: number }[] {
  const key = `${policy.targetNamespace}/${policy.targetName}`;
  if (policy.targetKind === "Service") {
    const ports = serviceSpecOf(cluster.services.get(key))?.ports;
    return (ports ?? []).map((p) => ({ name: p.name, number: p.port }));
  }
  if (policy.targetKind === "ServiceEntry") {
    const ports = cluster.serviceEntries.get(key)?.spec?.ports;
    return (ports ?? []).map((p) => ({ name: p.name, number: p.number }));
  }
  return [];
}

function destinationRuleName(policy: BackendPolicy): string {
  if (policy.targetKind === "ServiceEntry" || policy.targetKind === "XBackend") {
    return `${policy.targetName}~${policy.host.replaceAll(".", "-")}~${GENERATED_SUFFIX}`;
  }
  return `${policy.targetName}~${GENERATED_SUFFIX}`;
}

/** Merges policies per (target, host); the oldest policy wins each setting. */
export function destinationRules(policies: readonly BackendPolicy[], cluster: ClusterObjects): ConfigObject[] {
  const groups = groupBy(policies, (p) => `${p.targetKind}/${p.targetNamespace}/${p.targetName}/${p.host}`);
  const rules: ConfigObject[] = [];
  for (const group of groups.values()) {
    const ordered = [...group].sort((a, b) => compareByCreation(a.source, b.source));
    const first = ordered[0];
    const trafficPolicy: Record<string, unknown> = {};
    const byName = new Map<string, PortTrafficPolicy>();
    const byNumber = new Map<number, PortTrafficPolicy>();
    const parents: string[] = [];
    for (const p of ordered) {
      if (p.tls) {
        if (p.port !== undefined) {
          if (!byNumber.has(p.port)) byNumber.set(p.port, { port: { number: p.port }, tls: p.tls });
        } else if (p.sectionName !== undefined) {
          if (!byName.has(p.sectionName)) byName.set(p.sectionName, { port: {}, tls: p.tls });
        } else {
          if (trafficPolicy.tls) continue;
          trafficPolicy.tls = p.tls;
        }
      }
      if (p.loadBalancer) {
        if (trafficPolicy.loadBalancer) continue;
        trafficPolicy.loadBalancer = p.loadBalancer;
      }
      if (p.retryBudget) {
        if (trafficPolicy.retryBudget) continue;
        trafficPolicy.retryBudget = p.retryBudget;
      }
      const parent = `${p.source.kind}/${p.source.metadata.namespace}.${p.source.metadata.name}`;
      if (!parents.includes(parent)) parents.push(parent);
    }
    const ports = targetPorts(first, cluster);
    const portLevel: PortTrafficPolicy[] = [];
    for (const [name, setting] of byName) {
      const number = ports.find((p) => p.name === name)?.number;
      portLevel.push(number === undefined ? setting : { ...setting, port: { number } });
    }
    portLevel.push(...byNumber.values());
    if (portLevel.length > 0) {
      trafficPolicy.portLevelSettings = portLevel.sort((a, b) => (a.port.number ?? 0) - (b.port.number ?? 0));
    }
    rules.push({
      apiVersion: "networking.istio.io/v1",
      kind: "DestinationRule",
      metadata: {
        annotations: { [PARENTS_ANNOTATION]: parents.join(",") },
        name: destinationRuleName(first),
        namespace: first.targetNamespace,
      },
      spec: { host: first.host, trafficPolicy },
    });
  }
  return rules.sort(compareByCreation);
}

// --- ancestor statuses ---

/** A policy's ancestor is named by a ParentReference, as a route's parent is. */
export type AncestorRef = ParentRef;

export interface AncestorStatus {
  ancestorRef: AncestorRef;
  controllerName: string;
  conditions: Condition[];
}

function sameRef(a: AncestorRef, b: AncestorRef): boolean {
  return (
    a.group === b.group &&
    a.kind === b.kind &&
    a.name === b.name &&
    a.namespace === b.namespace &&
    a.sectionName === b.sectionName &&
    a.port === b.port
  );
}

export function ancestorStatus(
  ref: AncestorRef,
  live: readonly AncestorStatus[],
  generation: number | undefined,
  conditions: Readonly<Record<string, ConditionSpec>>,
  controller: string,
): AncestorStatus {
  const current = live.find((a) => sameRef(a.ancestorRef, ref));
  return {
    ancestorRef: ref,
    controllerName: controller,
    conditions: setConditions(generation, current?.conditions ?? [], conditions),
  };
}

/** Keeps other controllers' ancestors, replaces ours, appends new ones; at most `limit`. */
export function mergeAncestors(
  live: readonly AncestorStatus[],
  incoming: readonly AncestorStatus[],
  limit: number,
): AncestorStatus[] {
  const pending = [...incoming];
  const merged: AncestorStatus[] = [];
  for (const existing of live) {
    if (existing.controllerName !== GATEWAY_CONTROLLER && existing.controllerName !== MESH_CONTROLLER) {
      merged.push(existing);
      continue;
    }
    const index = pending.findIndex((a) => sameRef(a.ancestorRef, existing.ancestorRef));
    if (index !== -1) merged.push(...pending.splice(index, 1));
  }
  return [...merged, ...pending].slice(0, limit);
}

export const IGNORE_POLICY_ANNOTATION = "istio.io/ignore-policy-attachment";

export function isIgnored(policy: ConfigObject): boolean {
  return policy.metadata.annotations?.[IGNORE_POLICY_ANNOTATION]?.toLowerCase() === "true";
}

/** The status of a policy Istio was told to ignore. */
export function ignoredPolicyStatus(policy: ConfigObject, refs: readonly AncestorRef[]): Record<string, unknown> {
  const live = (policy.status ?? {}) as { ancestors?: AncestorStatus[] };
  const conditions: Record<string, ConditionSpec> = {
    Accepted: {
      reason: "Accepted",
      message: "Configuration is valid",
      error: {
        reason: "IgnoredByIstio",
        message: `Ignored by Istio due to annotation ${IGNORE_POLICY_ANNOTATION}=true`,
      },
    },
  };
  const ancestors = refs.map((ref) =>
    ancestorStatus(ref, live.ancestors ?? [], policy.metadata.generation, conditions, MESH_CONTROLLER),
  );
  return { ...live, ancestors: mergeAncestors(live.ancestors ?? [], ancestors, 16) };
}

export interface CaValidation {
  wellKnownCACertificates?: string;
  caCertificateRefs?: { group: string; kind: string; name: string }[];
}

/** The credential a backend's CA validation points at ("" for the system roots), recording problems in `conditions`. */
export function backendCaCredential(
  validation: CaValidation,
  namespace: string,
  conditions: Record<string, ConditionSpec>,
  cluster: ClusterObjects,
): string {
  if (validation.wellKnownCACertificates !== undefined) {
    if (validation.wellKnownCACertificates !== "System") {
      conditions.Accepted.error = {
        reason: "Invalid",
        message: `Unknown wellKnownCACertificates: ${validation.wellKnownCACertificates}`,
      };
    }
    return "";
  }
  const refs = validation.caCertificateRefs ?? [];
  if (refs.length === 0) return "";
  const ref = refs[0];
  if (refs.length > 1) conditions.Accepted.message += "; warning: only the first caCertificateRefs will be used";
  let problem: string;
  let resolvedRefs: ConfigError;
  const kind = referenceKind(ref);
  const target = kind ? referenced(cluster, kind, `${namespace}/${ref.name}`) : undefined;
  if (!kind) {
    problem = `unsupported kind ${ref.kind}`;
    resolvedRefs = { reason: "InvalidKind", message: `Certificate reference not supported: ${problem}` };
  } else if (!target) {
    problem = `reference ${namespace}/${ref.name} (of kind ${ref.kind}) not found`;
    resolvedRefs = { reason: "InvalidCACertificateRef", message: `Certificate reference not found: ${problem}` };
  } else if (kind === "ConfigMap") {
    const root = extractRoot(objectValues(target));
    if (!("error" in root)) return `configmap://${namespace}/${ref.name}`;
    problem = root.error;
    resolvedRefs = { reason: "InvalidCACertificateRef", message: `Certificate invalid: ${problem}` };
  } else {
    // Only ConfigMaps hold CA bundles for backends (Secrets are not supported yet, as in Istio).
    problem = `unsupported reference kind: ${ref.kind}`;
    resolvedRefs = { reason: "InvalidKind", message: `Certificate reference invalid: ${problem}` };
  }
  conditions.ResolvedRefs.error = resolvedRefs;
  conditions.Accepted.error = { reason: "NoValidCACertificate", message: `Certificate reference invalid: ${problem}` };
  return "invalid://";
}

// The kinds a policy reference may name (Istio's ReferenceSet).
type ReferenceKind = "Service" | "ServiceEntry" | "ConfigMap" | "Secret";

export function referenceKind(ref: { group: string; kind: string }): ReferenceKind | undefined {
  if (ref.group === "" && (ref.kind === "Service" || ref.kind === "ConfigMap" || ref.kind === "Secret"))
    return ref.kind;
  if (ref.group === "networking.istio.io" && ref.kind === "ServiceEntry") return "ServiceEntry";
  return undefined;
}

export function referenced(cluster: ClusterObjects, kind: ReferenceKind, key: string): ConfigObject | undefined {
  const maps = {
    Service: cluster.services,
    ServiceEntry: cluster.serviceEntries,
    ConfigMap: cluster.configMaps,
    Secret: cluster.secrets,
  };
  return maps[kind].get(key);
}

/** "Kind/ns/name" of a route backend → the Gateways ("ns/name") whose routes send to it. */
export type AncestorIndex = ReadonlyMap<string, ReadonlySet<string>>;

function backendKind(ref: { group?: string; kind?: string }): string | undefined {
  const group = ref.group ?? "";
  const kind = ref.kind ?? "Service";
  if (group === "" && kind === "Service") return "Service";
  if (group === "networking.istio.io" && kind === "ServiceEntry") return "ServiceEntry";
  if (group === "gateway.networking.x-k8s.io" && kind === "XBackend") return "XBackend";
  if (group === "inference.networking.k8s.io" && kind === "InferencePool") return "InferencePool";
  return undefined;
}

/** Which Gateways each backend is reached through, from the routes' parentRefs and backendRefs. */
export function routeAncestors(routes: readonly ConfigObject[]): AncestorIndex {
  const index = new Map<string, Set<string>>();
  for (const route of routes) {
    const namespace = route.metadata.namespace ?? "";
    const spec = (route.spec ?? {}) as {
      parentRefs?: { group?: string; kind?: string; name: string; namespace?: string }[];
      rules?: { backendRefs?: { group?: string; kind?: string; name: string; namespace?: string }[] }[];
    };
    const gateways = (spec.parentRefs ?? [])
      .filter(
        (p) =>
          (p.group ?? "gateway.networking.k8s.io") === "gateway.networking.k8s.io" &&
          (p.kind ?? "Gateway") === "Gateway",
      )
      .map((p) => `${p.namespace ?? namespace}/${p.name}`);
    for (const rule of spec.rules ?? []) {
      for (const ref of rule.backendRefs ?? []) {
        const kind = backendKind(ref);
        if (!kind) continue;
        const key = `${kind}/${ref.namespace ?? namespace}/${ref.name}`;
        const set = index.get(key) ?? new Set<string>();
        for (const g of gateways) set.add(g);
        index.set(key, set);
      }
    }
  }
  return index;
}

/** Sorted "ns/name" gateways of a backend. */
export function gatewaysOf(index: AncestorIndex, kind: string, namespace: string, name: string): string[] {
  return [...(index.get(`${kind}/${namespace}/${name}`) ?? [])].sort();
}
