// Revision tags in a test cluster as `sluice tag set` leaves them, reduced to what the tag watcher
// reads: a MutatingWebhookConfiguration istio-revision-tag-<tag> (no webhooks) labelled with the tag
// and the revision it names.
import type { Cluster } from "../cluster/index.ts";

const WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

export const tagWebhookPath = (tag: string) => `${WEBHOOKS}/istio-revision-tag-${tag}`;

/** Makes `tag` name `revision`: its webhook configuration created, or updated when it exists. */
export async function pointTag(cluster: Cluster, tag: string, revision: string): Promise<void> {
  const existing = await cluster.request("GET", tagWebhookPath(tag));
  const resourceVersion =
    existing.status === 200
      ? (existing.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion
      : undefined;
  const webhook = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: {
      name: `istio-revision-tag-${tag}`,
      labels: { "istio.io/tag": tag, "istio.io/rev": revision },
      resourceVersion,
    },
  };
  if (resourceVersion) await cluster.must("PUT", tagWebhookPath(tag), webhook);
  else await cluster.must("POST", WEBHOOKS, webhook);
}
