// DestinationRules for the same host in the same namespace are consolidated as Istio's
// mergeDestinationRule does, in processing order (rules with a workloadSelector first, then
// oldest first):
// - a rule merges into each existing rule whose exportTo equals its own or is covered by it, unless
//   both have workloadSelectors that differ;
// - merging appends the subsets whose names are new, and takes the traffic policy only when the
//   merged rule has none (the first rule wins);
// - the rule is also kept on its own unless the last existing rule absorbed it with the same
//   selector or none (Istio decides this per existing rule and keeps the last decision).
import type { DestinationRule } from "../config/types/index.ts";
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

/** Adds `rule` (its host already fully qualified) to `byHost`, merging as Istio does. */
export function mergeDestinationRule(
  byHost: DestinationRulesByHost,
  rule: DestinationRule,
  exportTo: ReadonlySet<string>,
): void {
  const host = rule.spec?.host ?? "";
  const incoming: ConsolidatedDestinationRule = { rule, exportTo, from: [key(rule)] };
  const existing = byHost.get(host);
  if (!existing) {
    byHost.set(host, [incoming]);
    return;
  }
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
    return merged(current, rule);
  });
  if (appendSeparately) next.push(incoming);
  byHost.set(host, next);
}

function merged(current: ConsolidatedDestinationRule, rule: DestinationRule): ConsolidatedDestinationRule {
  const spec = current.rule.spec ?? { host: "" };
  const names = new Set((spec.subsets ?? []).map((s) => s.name));
  const added = (rule.spec?.subsets ?? []).filter((s) => !names.has(s.name));
  const subsets = [...(spec.subsets ?? []), ...added];
  const trafficPolicy = spec.trafficPolicy ?? rule.spec?.trafficPolicy;
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
