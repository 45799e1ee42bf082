// EnvoyFilters by namespace, and those applying to a proxy in the order their patches apply
// (Istio's EnvoyFilters(proxy)): the root namespace's and the proxy namespace's whose
// workloadSelector (or targetRefs) match, by priority, root namespace first on a tie, then
// oldest first, then by name.
import type { EnvoyFilter } from "../config/types/index.ts";
import { compareStrings, creationTime, nameOf, namespaceOf } from "./config-meta.ts";
import { type PolicyWorkload, WorkloadPolicyIndex } from "./workload-policies.ts";

export class EnvoyFilterIndex {
  private readonly index: WorkloadPolicyIndex<EnvoyFilter>;

  constructor(
    configs: readonly EnvoyFilter[],
    private readonly rootNamespace: string,
  ) {
    this.index = new WorkloadPolicyIndex(configs, rootNamespace, (ef) => ({
      selector: ef.spec?.workloadSelector?.labels,
      targetRefs: ef.spec?.targetRefs ?? [],
    }));
  }

  /** The EnvoyFilters patching `proxy`'s config, in patch order. */
  forProxy(proxy: PolicyWorkload): EnvoyFilter[] {
    const filters = this.index.forWorkload(proxy);
    return filters.sort((a, b) => {
      const priority = (a.spec?.priority ?? 0) - (b.spec?.priority ?? 0);
      if (priority !== 0) return priority;
      const rootA = namespaceOf(a) === this.rootNamespace;
      const rootB = namespaceOf(b) === this.rootNamespace;
      if (namespaceOf(a) !== namespaceOf(b) && (rootA || rootB)) return rootA ? -1 : 1;
      return (
        creationTime(a) - creationTime(b) ||
        compareStrings(`${nameOf(a)}.${namespaceOf(a)}`, `${nameOf(b)}.${namespaceOf(b)}`)
      );
    });
  }
}
