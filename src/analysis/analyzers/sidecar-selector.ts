// sidecar.SelectorAnalyzer: a Sidecar's workload selector must match pods of its namespace, no pod may be
// selected by two Sidecars, at most one Sidecar without a selector per namespace, and Sidecars have no
// effect on ambient workloads or namespaces.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { firstSelectorKey, selectorMatches, selectorString } from "../labels.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { annotationsOf, asRecord, asStringMap, fullName, labelsOf, type Resource, specOf } from "../resource.ts";

export const sidecarSelectorAnalyzer: Analyzer = {
  name: "sidecar.SelectorAnalyzer",
  description:
    "Validates that sidecars that define a workload selector match at least one pod, and that there aren't multiple sidecar resources that select overlapping pods",
  inputs: [K.Sidecar, K.Pod, K.Namespace],
  analyze(ctx) {
    const podSidecars = new Map<string, { pod: Resource; sidecars: Resource[] }>();
    const namespaceSidecars = new Map<string, Resource[]>();
    for (const sidecar of ctx.list(K.Sidecar)) {
      const selector = asStringMap(asRecord(specOf(sidecar).workloadSelector).labels);
      if (Object.keys(selector).length === 0) {
        namespaceSidecars.set(sidecar.namespace, [...(namespaceSidecars.get(sidecar.namespace) ?? []), sidecar]);
        continue;
      }
      let found = false;
      for (const pod of ctx.list(K.Pod)) {
        if (pod.namespace !== sidecar.namespace || !selectorMatches(selector, labelsOf(pod))) continue;
        found = true;
        const entry = podSidecars.get(fullName(pod)) ?? { pod, sidecars: [] };
        podSidecars.set(fullName(pod), entry);
        entry.sidecars.push(sidecar);
      }
      if (!found)
        ctx.report(
          atField(
            newMessage(MESSAGES.ReferencedResourceNotFound, sidecar, "selector", selectorString(selector)),
            `{.spec.workloadSelector.labels.${firstSelectorKey(selectorString(selector))}}`,
          ),
        );
    }

    const reported = new Set<string>();
    const ineffective = (sidecar: Resource, why: string) => {
      if (reported.has(fullName(sidecar))) return;
      reported.add(fullName(sidecar));
      ctx.report(newMessage(MESSAGES.IneffectivePolicy, sidecar, why));
    };
    for (const { pod, sidecars } of podSidecars.values()) {
      const ambient = annotationsOf(pod)["ambient.istio.io/redirection"] === "enabled";
      if (sidecars.length === 1 && !ambient) continue;
      const names = sidecars.map((s) => s.name).sort();
      for (const sidecar of sidecars) {
        if (ambient) ineffective(sidecar, "selected workload is in ambient mode, the policy has no impact");
        else
          ctx.report(
            atField(
              newMessage(MESSAGES.ConflictingSidecarWorkloadSelectors, sidecar, names, pod.namespace, pod.name),
              "{.metadata.name}",
            ),
          );
      }
    }
    for (const [ns, sidecars] of namespaceSidecars) {
      const namespace = ctx.find(K.Namespace, "", ns);
      if (namespace && namespaceInAmbient(namespace)) {
        for (const sidecar of sidecars) ineffective(sidecar, "namespace is in ambient mode, the policy has no impact");
        continue;
      }
      if (sidecars.length < 2) continue;
      const names = sidecars.map((s) => s.name).sort();
      for (const sidecar of sidecars)
        ctx.report(newMessage(MESSAGES.MultipleSidecarsWithoutWorkloadSelectors, sidecar, names, ns));
    }
  },
};

/** util.NamespaceInAmbientMode: dataplane-mode ambient and no sidecar injection labels. */
function namespaceInAmbient(ns: Resource): boolean {
  const labels = labelsOf(ns);
  if (labels["istio-injection"] === "enabled") return false;
  if ((labels["istio.io/rev"] ?? "") !== "") return false;
  return labels["istio.io/dataplane-mode"] === "ambient";
}
