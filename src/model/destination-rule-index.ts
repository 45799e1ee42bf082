// DestinationRules of a push indexed as Istio's destinationRuleIndex, and the lookup of the rules
// that apply to a service for a proxy in some namespace:
// 1. rules in the proxy's own namespace (every exportTo that includes it), most specific host;
//    for a proxy in the root namespace, only the root namespace's private rules here;
// 2. else rules in the service's namespace exported to the proxy's namespace;
// 3. else rules in the root namespace exported to the proxy's namespace.
// Rules with a workloadSelector stay in their namespace whatever their exportTo.
import type { DestinationRule } from "../config/types/index.ts";
import { labelsContain } from "../krt/index.ts";
import { compareByCreationTime, namespaceOf } from "./config-meta.ts";
import {
  type ConsolidatedDestinationRule,
  type DestinationRulesByHost,
  mergeDestinationRule,
} from "./destination-rule-merge.ts";
import { mostSpecificHostMatch, resolveShortName } from "./host.ts";
import { EXPORT_PRIVATE, EXPORT_PUBLIC } from "./visibility.ts";

export class DestinationRuleIndex {
  private readonly namespaceLocal = new Map<string, DestinationRulesByHost>();
  private readonly exportedByNamespace = new Map<string, DestinationRulesByHost>();
  private readonly rootNamespaceLocal: DestinationRulesByHost = new Map();
  /** Subsets dropped while merging rules for one host (Istio's pilot_destrule_subsets cases). */
  readonly duplicateSubsets: { host: string; subset: string }[] = [];

  constructor(
    configs: readonly DestinationRule[],
    private readonly rootNamespace: string,
    defaultExportTo: readonly string[] | undefined,
    domainSuffix: string,
  ) {
    const defaultPrivate = (defaultExportTo ?? []).includes(EXPORT_PRIVATE);
    for (const config of [...configs].sort(compareBySelectorThenAge)) {
      const namespace = namespaceOf(config);
      const spec = config.spec ?? { host: "" };
      const rule: DestinationRule = {
        ...config,
        spec: { ...spec, host: resolveShortName(spec.host, namespace, domainSuffix) },
      };
      const exportTo: ReadonlySet<string> = spec.workloadSelector
        ? new Set([namespace])
        : new Set((spec.exportTo ?? []).map((e) => (e === EXPORT_PRIVATE ? namespace : e)));

      const merge = (byHost: DestinationRulesByHost) => {
        for (const subset of mergeDestinationRule(byHost, rule, exportTo)) {
          this.duplicateSubsets.push({ host: rule.spec?.host ?? "", subset });
        }
      };
      if (exportTo.size === 0 || exportTo.has(EXPORT_PUBLIC) || exportTo.has(namespace)) {
        merge(bucket(this.namespaceLocal, namespace));
      }
      const privateOnly = exportTo.size === 0 ? defaultPrivate : exportTo.size === 1 && exportTo.has(namespace);
      if (!privateOnly) merge(bucket(this.exportedByNamespace, namespace));
      else if (namespace === rootNamespace) merge(this.rootNamespaceLocal);
    }
  }

  /** The consolidated rules for `service` as seen by a proxy whose config namespace is `proxyNamespace`. */
  forService(proxyNamespace: string, service: { hostname: string; namespace: string }): ConsolidatedDestinationRule[] {
    const local =
      proxyNamespace === this.rootNamespace ? this.rootNamespaceLocal : this.namespaceLocal.get(proxyNamespace);
    const own = local && lookup(local, service.hostname);
    if (own) return own;
    if (service.namespace !== "") {
      const exported = this.exported(service.namespace, service.hostname, proxyNamespace);
      if (exported.length > 0) return exported;
    }
    return this.exported(this.rootNamespace, service.hostname, proxyNamespace);
  }

  private exported(owner: string, hostname: string, client: string): ConsolidatedDestinationRule[] {
    const rules = lookup(this.exportedByNamespace.get(owner), hostname) ?? [];
    return rules.filter((r) => r.exportTo.size === 0 || r.exportTo.has(EXPORT_PUBLIC) || r.exportTo.has(client));
  }
}

function lookup(
  byHost: DestinationRulesByHost | undefined,
  hostname: string,
): ConsolidatedDestinationRule[] | undefined {
  if (!byHost) return undefined;
  const host = mostSpecificHostMatch(hostname, byHost.keys());
  return host === undefined ? undefined : byHost.get(host);
}

function bucket(index: Map<string, DestinationRulesByHost>, namespace: string): DestinationRulesByHost {
  const existing = index.get(namespace);
  if (existing) return existing;
  const created: DestinationRulesByHost = new Map();
  index.set(namespace, created);
  return created;
}

/** Rules with a workloadSelector first, then oldest first (Istio's sortConfigBySelectorAndCreationTime). */
function compareBySelectorThenAge(a: DestinationRule, b: DestinationRule): number {
  const sa = a.spec?.workloadSelector ? 0 : 1;
  const sb = b.spec?.workloadSelector ? 0 : 1;
  return sa - sb || compareByCreationTime(a, b);
}

/**
 * The rule a proxy in `namespace` with `labels` applies among a service's consolidated rules
 * (Istio's SidecarScope.DestinationRule): for outbound traffic, a rule of the proxy's namespace
 * whose workloadSelector matches its labels; else the rule without selector.
 */
export function destinationRuleForProxy(
  rules: readonly ConsolidatedDestinationRule[],
  direction: "inbound" | "outbound",
  namespace: string,
  labels: Readonly<Record<string, string>>,
): ConsolidatedDestinationRule | undefined {
  let catchAll: ConsolidatedDestinationRule | undefined;
  for (const rule of rules) {
    const selector = rule.rule.spec?.workloadSelector;
    if (!selector) catchAll = rule;
    else if (
      direction === "outbound" &&
      namespaceOf(rule.rule) === namespace &&
      labelsContain(labels, selector.matchLabels ?? {})
    ) {
      return rule;
    }
  }
  return catchAll;
}
