// injection.ImageAutoAnalyzer: an istio-proxy container with `image: auto` only works when injected: on a
// Pod it is always an error (too late to inject); on a Deployment a warning when no Istio webhook
// (named *istio.io) selects its namespace and pod labels.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { type LabelSelector, labelSelectorMatches, labelSelectorOf } from "../labels.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, asStringMap, labelsOf, podSpecOf, type Resource, specOf } from "../resource.ts";

export const imageAutoAnalyzer: Analyzer = {
  name: "injection.ImageAutoAnalyzer",
  description: "Makes sure that Pods and Deployments with `image: auto` are going to be injected",
  inputs: [K.Namespace, K.Pod, K.Deployment, K.MutatingWebhookConfiguration],
  analyze(ctx) {
    const webhooks: { namespaceSelector?: LabelSelector; objectSelector?: LabelSelector }[] = [];
    for (const r of ctx.list(K.MutatingWebhookConfiguration)) {
      for (const hook of asArray(r.object.webhooks).map(asRecord)) {
        if (!asString(hook.name).endsWith("istio.io")) continue;
        webhooks.push({
          namespaceSelector: labelSelectorOf(hook.namespaceSelector),
          objectSelector: labelSelectorOf(hook.objectSelector),
        });
      }
    }
    for (const pod of ctx.list(K.Pod)) {
      if (hasAutoImage(pod)) ctx.report(newMessage(MESSAGES.ImageAutoWithoutInjectionError, pod, "Pod", pod.name));
    }
    for (const deployment of ctx.list(K.Deployment)) {
      if (!hasAutoImage(deployment)) continue;
      const namespace = ctx.find(K.Namespace, "", deployment.namespace || "default");
      const namespaceLabels = namespace ? labelsOf(namespace) : {};
      const podLabels = asStringMap(asRecord(asRecord(specOf(deployment).template).metadata).labels);
      const injected = webhooks.some(
        (w) =>
          labelSelectorMatches(w.namespaceSelector, namespaceLabels) &&
          labelSelectorMatches(w.objectSelector, podLabels),
      );
      if (!injected)
        ctx.report(newMessage(MESSAGES.ImageAutoWithoutInjectionWarning, deployment, "Deployment", deployment.name));
    }
  },
};

function hasAutoImage(r: Resource): boolean {
  return asArray(podSpecOf(r).containers)
    .map(asRecord)
    .some((c) => c.name === "istio-proxy" && c.image === "auto");
}
