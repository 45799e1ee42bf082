// DestinationRules for the same host in the same namespace are consolidated as Istio's
// mergeDestinationRule does, in processing order (rules with a workloadSelector first, then
// oldest first):
// - a rule merges into each existing rule whose exportTo equals its own or is covered by it, unless
//   both have workloadSelectors that differ;
// - merging appends the subsets whose names are new, and takes the traffic policy only when the
//   merged rule has none (the first rule wins); between a user's rule and one translated from a
//   Gateway API backend policy (annotated internal.istio.io/parents), the user's fields win and the
//   backend policy's fill the gaps, whichever is older;
// - the rule is also kept on its own unless the last existing rule absorbed it with the same
//   selector or none (Istio decides this per existing rule and keeps the last decision).
import type {
  DestinationRule,
  DestinationRuleTrafficPolicyPortLevelSettings as PortTrafficPolicy,
  DestinationRuleTrafficPolicy as TrafficPolicy,
} from "../config/types/index.ts";
import { nameOf, namespaceOf } from "./config-meta.ts";

export interface ConsolidatedDestinationRule {
  /** The merged rule: the first rule's metadata, host made fully qualified, subsets and policy merged. */
  readonly rule: DestinationRule;
  /** Its exportTo as written, `.` made the namespace; empty when unset. */
  readonly exportTo: ReadonlySet<string>;
  /** The rules merged into it, `namespace/name`, the one whose metadata it carries first. */
  readonly from: readonly string[];
}

/** Consolidated rules by fully qualified host (wildcards included). */
export type DestinationRulesByHost = Map<string, ConsolidatedDestinationRule[]>;

/**
 * Adds `rule` (its host already fully qualified) to `byHost`, merging as Istio does. Returns the
 * names of its subsets dropped because a rule it merged into has them already (pilot_destrule_subsets).
 */
export function mergeDestinationRule(
  byHost: DestinationRulesByHost,
  rule: DestinationRule,
  exportTo: ReadonlySet<string>,
): string[] {
  const host = rule.spec?.host ?? "";
  const incoming: ConsolidatedDestinationRule = { rule, exportTo, from: [key(rule)] };
  const existing = byHost.get(host);
  if (!existing) {
    byHost.set(host, [incoming]);
    return [];
  }
  const duplicateSubsets: string[] = [];
  let appendSeparately = true;
  const next = existing.map((current) => {
    if (sameSet(exportTo, current.exportTo)) appendSeparately = false;
    else if (current.exportTo.size > 0 && isSuperset(exportTo, current.exportTo)) appendSeparately = true;
    else {
      appendSeparately = true;
      return current;
    }
    const incomingSelector = rule.spec?.workloadSelector;
    const currentSelector = current.rule.spec?.workloadSelector;
    const bothWith = incomingSelector !== undefined && currentSelector !== undefined;
    if (bothWith && !sameLabels(incomingSelector.matchLabels ?? {}, currentSelector.matchLabels ?? {})) {
      appendSeparately = true;
      return current;
    }
    if (bothWith || (incomingSelector === undefined && currentSelector === undefined)) appendSeparately = false;
    const names = new Set((current.rule.spec?.subsets ?? []).map((s) => s.name));
    for (const subset of rule.spec?.subsets ?? []) if (names.has(subset.name)) duplicateSubsets.push(subset.name);
    return merged(current, rule);
  });
  if (appendSeparately) next.push(incoming);
  byHost.set(host, next);
  return duplicateSubsets;
}

function merged(current: ConsolidatedDestinationRule, rule: DestinationRule): ConsolidatedDestinationRule {
  const spec = current.rule.spec ?? { host: "" };
  const names = new Set((spec.subsets ?? []).map((s) => s.name));
  const added = (rule.spec?.subsets ?? []).filter((s) => !names.has(s.name));
  const subsets = [...(spec.subsets ?? []), ...added];
  const trafficPolicy = mergedTrafficPolicy(current.rule, rule);
  return {
    rule: {
      ...current.rule,
      spec: {
        ...spec,
        ...(subsets.length > 0 ? { subsets } : {}),
        ...(trafficPolicy ? { trafficPolicy } : {}),
      },
    },
    exportTo: current.exportTo,
    from: [...current.from, key(rule)],
  };
}

/** Annotation of DestinationRules translated from Gateway API policies (BackendTLSPolicy, XBackendTrafficPolicy). */
const PARENTS_ANNOTATION = "internal.istio.io/parents";

function isBackendPolicy(rule: DestinationRule): boolean {
  return rule.metadata.annotations?.[PARENTS_ANNOTATION] !== undefined;
}

function mergedTrafficPolicy(current: DestinationRule, incoming: DestinationRule): TrafficPolicy | undefined {
  const existing = current.spec?.trafficPolicy;
  const added = incoming.spec?.trafficPolicy;
  if (isBackendPolicy(current) === isBackendPolicy(incoming)) return existing ?? added;
  return isBackendPolicy(incoming) ? userOverBackend(existing, added) : userOverBackend(added, existing);
}

/** The backend policy's settings with every one the user sets replaced (Istio's mergeBackendPolicyTrafficPolicy). */
function userOverBackend(
  user: TrafficPolicy | undefined,
  backend: TrafficPolicy | undefined,
): TrafficPolicy | undefined {
  if (!user) return backend;
  if (!backend) return user;
  const { portLevelSettings: userPorts, ...userFields } = user;
  const merged = fillGaps(userFields, backend, [
    "connectionPool",
    "outlierDetection",
    "loadBalancer",
    "tls",
    "tunnel",
    "proxyProtocol",
    "retryBudget",
  ]);
  const portLevelSettings = userOverBackendPorts(userPorts ?? [], backend.portLevelSettings ?? []);
  return portLevelSettings.length > 0 ? { ...merged, portLevelSettings } : merged;
}

/** Per port: the user's settings, gaps filled from the backend's; ports only the backend sets are appended. */
function userOverBackendPorts(
  user: readonly PortTrafficPolicy[],
  backend: readonly PortTrafficPolicy[],
): PortTrafficPolicy[] {
  const merged = user.map((u) => {
    const b = backend.find((p) => p.port?.number === u.port?.number);
    return b ? fillGaps(u, b, ["loadBalancer", "connectionPool", "outlierDetection", "tls"]) : u;
  });
  const userPorts = new Set(user.map((u) => u.port?.number));
  return [...merged, ...backend.filter((b) => !userPorts.has(b.port?.number))];
}

/** `user` with each of `fields` it leaves unset taken from `backend`. */
function fillGaps<T extends object>(user: T, backend: T, fields: readonly (keyof T)[]): T {
  const out = { ...user };
  for (const field of fields) {
    if (out[field] === undefined && backend[field] !== undefined) out[field] = backend[field];
  }
  return out;
}

function key(rule: DestinationRule): string {
  return `${namespaceOf(rule)}/${nameOf(rule)}`;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && isSuperset(a, b);
}

function isSuperset(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const v of b) if (!a.has(v)) return false;
  return true;
}

function sameLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
