// Whether a pod gets a sidecar: Istio's injectRequired (host networking, system namespaces, the
// `sidecar.istio.io/inject` label or annotation, the injector's policy) and the namespace and object
// selectors of Istio's MutatingWebhookConfiguration, which decide which pods reach the webhook at all.
import { type LabelSelector, selectorMatches } from "../../sources/kube/labels.ts";
import type { ObjectMeta, PodSpec } from "./pod.ts";
import type { InjectionPolicy } from "./settings.ts";

/** Namespaces Istio never injects into (pkg/kube/inject IgnoredNamespaces). */
export const IGNORED_NAMESPACES: ReadonlySet<string> = new Set([
  "kube-system",
  "kube-public",
  "kube-node-lease",
  "local-path-storage",
]);

const INJECT = "sidecar.istio.io/inject";

export interface InjectionPolicyConfig {
  policy: InjectionPolicy;
  neverInjectSelector: readonly LabelSelector[];
  alwaysInjectSelector: readonly LabelSelector[];
}

export function injectRequired(config: InjectionPolicyConfig, spec: PodSpec, metadata: ObjectMeta): boolean {
  // iptables in a host-network pod would rewrite the node's routing.
  if (spec.hostNetwork) return false;
  if (IGNORED_NAMESPACES.has(metadata.namespace ?? "")) return false;
  // The label is the newer API and wins over the annotation.
  const selector = metadata.labels?.[INJECT] ?? metadata.annotations?.[INJECT] ?? "";
  if (selector === "true") return true;
  if (selector === "false") return false;
  // Anything else falls back to the selectors, then the policy, as Istio does (with a warning).
  const labels = metadata.labels ?? {};
  const matches = (s: LabelSelector) => !isEmptySelector(s) && selectorMatches(s, labels);
  if (config.neverInjectSelector.some(matches)) return false;
  if (config.alwaysInjectSelector.some(matches)) return true;
  return config.policy === "enabled";
}

function isEmptySelector(s: LabelSelector): boolean {
  return Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;
}

/**
 * Whether the API server would send this pod to the injector: the selectors of Istio's sidecar
 * injector webhooks for `revision` ("" is the default revision), over the namespace's labels.
 */
export function webhookSelects(
  namespaceLabels: Record<string, string>,
  podLabels: Record<string, string>,
  revision: string,
): boolean {
  const nsInjection = namespaceLabels["istio-injection"];
  const nsRevision = namespaceLabels["istio.io/rev"];
  const podInject = podLabels[INJECT];
  const podRevision = podLabels["istio.io/rev"];
  if (revision === "") {
    if (nsInjection === "enabled") return podInject !== "false";
    return nsInjection === undefined && nsRevision === undefined && podInject === "true" && podRevision === undefined;
  }
  if (nsInjection === undefined && nsRevision === revision) return podInject !== "false";
  return nsInjection === undefined && nsRevision === undefined && podInject === "true" && podRevision === revision;
}
