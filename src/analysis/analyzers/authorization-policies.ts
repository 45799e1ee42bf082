// auth.AuthorizationPoliciesAnalyzer: an AuthorizationPolicy's selector must match mesh (or ambient) pods
// of its namespace (any namespace for root-namespace policies), and the namespaces its rules name must exist.
import type { AnalysisContext, Analyzer } from "../analyzer.ts";
import { inMesh } from "../in-mesh.ts";
import { K } from "../kinds.ts";
import { selectorMatches, selectorString } from "../labels.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import {
  annotationsOf,
  asArray,
  asRecord,
  asString,
  asStringArray,
  asStringMap,
  labelsOf,
  type Resource,
  specOf,
} from "../resource.ts";

export const authorizationPoliciesAnalyzer: Analyzer = {
  name: "auth.AuthorizationPoliciesAnalyzer",
  description: "Checks the validity of authorization policies",
  inputs: [K.MeshConfig, K.AuthorizationPolicy, K.Namespace, K.Pod],
  analyze(ctx) {
    const podLabels = meshPodLabels(ctx);
    const mesh = ctx.list(K.MeshConfig)[0];
    const rootNamespace = mesh ? asString(specOf(mesh).rootNamespace) : undefined;
    for (const policy of ctx.list(K.AuthorizationPolicy)) {
      checkWorkloads(ctx, policy, podLabels, rootNamespace);
      checkNamespaces(ctx, policy);
    }
  },
};

/** Namespace → labels of its pods that are in the mesh or ambient (twice when both, as Istio counts them). */
function meshPodLabels(ctx: AnalysisContext): Map<string, Record<string, string>[]> {
  const byNamespace = new Map<string, Record<string, string>[]>();
  for (const pod of ctx.list(K.Pod)) {
    const list = byNamespace.get(pod.namespace) ?? [];
    byNamespace.set(pod.namespace, list);
    if (inMesh(ctx, pod)) list.push(labelsOf(pod));
    if (annotationsOf(pod)["ambient.istio.io/redirection"] === "enabled") list.push(labelsOf(pod));
  }
  return byNamespace;
}

function checkWorkloads(
  ctx: AnalysisContext,
  policy: Resource,
  podLabels: Map<string, Record<string, string>[]>,
  rootNamespace: string | undefined,
): void {
  const selectorValue = specOf(policy).selector;
  const hasSelector = selectorValue !== undefined && selectorValue !== null;
  const selector = asStringMap(asRecord(selectorValue).matchLabels);
  const matchesIn = (labels: Record<string, string>[] | undefined) =>
    (labels ?? []).some((l) => selectorMatches(selector, l));
  if (policy.namespace === rootNamespace) {
    if (hasSelector && ![...podLabels.values()].some(matchesIn)) {
      ctx.report(newMessage(MESSAGES.NoMatchingWorkloadsFound, policy, selectorString(selector)));
    }
    return;
  }
  if (!hasSelector) {
    if ((podLabels.get(policy.namespace) ?? []).length === 0)
      ctx.report(newMessage(MESSAGES.NoMatchingWorkloadsFound, policy, ""));
    return;
  }
  if (!matchesIn(podLabels.get(policy.namespace))) {
    ctx.report(newMessage(MESSAGES.NoMatchingWorkloadsFound, policy, selectorString(selector)));
  }
}

function checkNamespaces(ctx: AnalysisContext, policy: Resource): void {
  const namespaces = ctx.list(K.Namespace).map((ns) => ns.name);
  for (const [i, rule] of asArray(specOf(policy).rules).map(asRecord).entries()) {
    for (const [j, from] of asArray(rule.from).map(asRecord).entries()) {
      const source = asRecord(from.source);
      const included = asStringArray(source.namespaces);
      for (const [k, expression] of [...included, ...asStringArray(source.notNamespaces)].entries()) {
        if (namespaces.some((ns) => namespaceMatch(ns, expression))) continue;
        // Istio places notNamespaces entries at the same index of `namespaces`.
        const index = k < included.length ? k : k - included.length;
        const m = newMessage(MESSAGES.ReferencedResourceNotFound, policy, "namespace", expression);
        ctx.report(atField(m, `{.spec.rules[${i}].from[${j}].source.namespaces[${index}]}`));
      }
    }
  }
}

/** "*", a "*suffix", a "prefix*", or the name (case-insensitively). */
function namespaceMatch(ns: string, expression: string): boolean {
  if (expression === "*") return true;
  if (expression.startsWith("*")) return ns.endsWith(expression.slice(1));
  if (expression.endsWith("*")) return ns.startsWith(expression.slice(0, -1));
  return ns.toLowerCase() === expression.toLowerCase();
}
