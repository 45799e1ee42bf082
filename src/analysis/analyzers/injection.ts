// injection.Analyzer: namespaces without an injection label (or enabled by default), namespaces with
// several injection labels, and pods in injected namespaces that lack the sidecar.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import {
  annotationsOf,
  asArray,
  asRecord,
  asString,
  asStringMap,
  fullName,
  labelsOf,
  type Resource,
  specOf,
} from "../resource.ts";

const INJECTION_LABEL = "istio-injection";
const REVISION_LABEL = "istio.io/rev";
const DATAPLANE_MODE_LABEL = "istio.io/dataplane-mode";
const INJECT = "sidecar.istio.io/inject";
const INJECTOR_CONFIGMAP = "istio-sidecar-injector";

export const injectionAnalyzer: Analyzer = {
  name: "injection.Analyzer",
  description: "Checks conditions related to Istio sidecar injection",
  inputs: [K.Namespace, K.Pod, K.ConfigMap],
  analyze(ctx) {
    // As Istio: once an injector ConfigMap enables namespaces by default, later namespaces see it too.
    let enabledByDefault = false;
    const injected = new Set<string>();
    for (const ns of ctx.list(K.Namespace)) {
      if (ns.name === "istio-system") continue;
      const labels = labelsOf(ns);
      const hasInjectionLabel = INJECTION_LABEL in labels;
      const injectionLabel = labels[INJECTION_LABEL] ?? "";
      const istioLabels = hasInjectionLabel ? [`${INJECTION_LABEL}=${injectionLabel}`] : [];
      for (const l of [REVISION_LABEL, DATAPLANE_MODE_LABEL]) {
        if (l in labels && (!hasInjectionLabel || injectionLabel === "enabled")) istioLabels.push(`${l}=${labels[l]}`);
      }
      if (istioLabels.length > 1) ctx.report(newMessage(MESSAGES.NamespaceMultipleInjectionLabels, ns, istioLabels));
      if (labels[DATAPLANE_MODE_LABEL] === "ambient") continue;

      const revision = labels[REVISION_LABEL] ?? "";
      const configMapName =
        revision === "" || revision === "default" ? INJECTOR_CONFIGMAP : `${INJECTOR_CONFIGMAP}-${revision}`;
      const configMap = ctx.list(K.ConfigMap).find((cm) => cm.name === configMapName);
      if (configMap) enabledByDefault = namespacesEnabledByDefault(configMap);

      if (injectionLabel === "" && !(REVISION_LABEL in labels)) {
        ctx.report(
          enabledByDefault
            ? newMessage(MESSAGES.NamespaceInjectionEnabledByDefault, ns)
            : atField(newMessage(MESSAGES.NamespaceNotInjected, ns, fullName(ns), fullName(ns)), "{.metadata.name}"),
        );
        continue;
      }
      if (injectionLabel === "enabled") injected.add(ns.name);
    }
    for (const pod of ctx.list(K.Pod)) {
      if (!injected.has(pod.namespace)) continue;
      const labels = labelsOf(pod);
      const inject = INJECT in labels ? labels[INJECT] : (annotationsOf(pod)[INJECT] ?? "");
      const spec = specOf(pod);
      if (inject.toLowerCase() === "false" || spec.hostNetwork === true) continue;
      const proxy = [...asArray(spec.containers), ...asArray(spec.initContainers)]
        .map(asRecord)
        .find((c) => c.name === "istio-proxy");
      if (asString(proxy?.image) === "") ctx.report(newMessage(MESSAGES.PodMissingProxy, pod, fullName(pod)));
    }
  },
};

/** The injector values' sidecarInjectorWebhook.enableNamespacesByDefault. */
function namespacesEnabledByDefault(configMap: Resource): boolean {
  try {
    const values = asRecord(JSON.parse(asStringMap(configMap.object.data).values ?? ""));
    return asRecord(values.sidecarInjectorWebhook).enableNamespacesByDefault === true;
  } catch {
    return false;
  }
}
