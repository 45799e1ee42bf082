// webhook.Analyzer: Istio's injection webhooks (revisioned, or named *istio.io) must not both select the
// same namespace/pod label combination, and must point at Services that exist.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { type LabelSelector, labelSelectorMatches, labelSelectorOf } from "../labels.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, fullName, labelsOf, type Resource } from "../resource.ts";

const REVISION_LABEL = "istio.io/rev";

interface Webhook {
  /** "<configuration>/<webhook name>" */
  id: string;
  resource: Resource;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  service?: { namespace: string; name: string };
}

export const webhookAnalyzer: Analyzer = {
  name: "webhook.Analyzer",
  description: "Checks the validity of Istio webhooks",
  inputs: [K.MutatingWebhookConfiguration, K.Service],
  analyze(ctx) {
    const webhooks: Webhook[] = [];
    const revisions = new Set<string>();
    for (const r of ctx.list(K.MutatingWebhookConfiguration)) {
      const hooks = asArray(r.object.webhooks).map(asRecord);
      const revs = webhookRevisions(labelsOf(r), hooks);
      if (revs.length === 0 && !hooks.some((h) => asString(h.name).endsWith("istio.io"))) continue;
      for (const rev of revs) revisions.add(rev);
      for (const h of hooks) {
        const service = asRecord(asRecord(h.clientConfig).service);
        webhooks.push({
          id: `${fullName(r)}/${asString(h.name)}`,
          resource: r,
          namespaceSelector: labelSelectorOf(h.namespaceSelector),
          objectSelector: labelSelectorOf(h.objectSelector),
          service:
            asRecord(h.clientConfig).service === undefined
              ? undefined
              : { namespace: asString(service.namespace), name: asString(service.name) },
        });
      }
    }

    const withRevisions = (base: Record<string, string>[]) => [
      ...base,
      ...[...revisions].flatMap((rev) => base.map((labels) => ({ ...labels, [REVISION_LABEL]: rev }))),
    ];
    const namespaceLabels = withRevisions([{}, { "istio-injection": "enabled" }, { "istio-injection": "disabled" }]);
    const objectLabels = withRevisions([
      {},
      { "sidecar.istio.io/inject": "true" },
      { "sidecar.istio.io/inject": "false" },
    ]);
    for (const nl of namespaceLabels) {
      for (const ol of objectLabels) {
        const matches = [
          ...new Set(
            webhooks
              .filter(
                (w) => labelSelectorMatches(w.namespaceSelector, nl) && labelSelectorMatches(w.objectSelector, ol),
              )
              .map((w) => w.id),
          ),
        ];
        if (matches.length < 2) continue;
        for (const match of matches) {
          const others = matches.filter((m) => m !== match).sort();
          const resource = webhooks.find((w) => w.id === match)?.resource;
          const detail = `Webhook overlaps with others: [${others.join(" ")}]. This may cause injection to occur twice.`;
          ctx.report(newMessage(MESSAGES.InvalidWebhook, resource, detail));
        }
      }
    }
    for (const w of webhooks) {
      if (!w.service || ctx.exists(K.Service, w.service.namespace, w.service.name)) continue;
      const name = w.service.namespace ? `${w.service.namespace}/${w.service.name}` : w.service.name;
      const detail = `Injector refers to a control plane service that does not exist: ${name}.`;
      ctx.report(newMessage(MESSAGES.InvalidWebhook, w.resource, detail));
    }
  },
};

/** The revisions a webhook configuration serves: its istio.io/rev label and the revisions its selectors name. */
function webhookRevisions(labels: Record<string, string>, hooks: Record<string, unknown>[]): string[] {
  const revisions = new Set<string>();
  if (REVISION_LABEL in labels) revisions.add(labels[REVISION_LABEL]);
  for (const hook of hooks) {
    for (const selector of [hook.namespaceSelector, hook.objectSelector]) {
      if (selector === undefined || selector === null) continue;
      const matchLabels = asRecord(asRecord(selector).matchLabels);
      if (REVISION_LABEL in matchLabels) revisions.add(String(matchLabels[REVISION_LABEL]));
      for (const e of asArray(asRecord(selector).matchExpressions).map(asRecord)) {
        if (e.key === REVISION_LABEL) for (const v of asArray(e.values)) revisions.add(String(v));
      }
    }
  }
  return [...revisions];
}
