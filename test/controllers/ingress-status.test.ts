// The Ingress status writer against a real API server (test/cluster), through the Kubernetes source and
// the store as sluiced runs it, with the tag watcher deciding whose Ingresses are this revision's (as
// istiod's RegisterStatus asks its IsMine): an Ingress labelled with one of the revision's tags, or in
// a namespace so labelled, gets the ingress gateway's address; one of another revision's tag is left
// alone until that tag is moved to this revision. Revision and tags are this file's own: webhook
// configurations are cluster-wide.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { KINDS, kindKey, MeshWatcher } from "../../src/config/index.ts";
import { IngressStatusWriter, TagWatcher } from "../../src/controllers/index.ts";
import { ConfigStore } from "../../src/sources/index.ts";
import { KubeClient, KubeSource } from "../../src/sources/kube/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { writers } from "../support/managed-fields.ts";
import { pointTag, tagWebhookPath } from "../support/revision-tags.ts";
import { waitFor } from "../support/xds-fixtures.ts";

const skip = clusterSkipReason();
const SELECT_LABEL = "sluice.test/ingress-status";
const WATCHED = ["Namespace", "Ingress", "IngressClass", "Service"];

type IngressObject = { status?: { loadBalancer?: { ingress?: unknown[] } } };

describe("IngressStatusWriter with revision tags", { skip }, () => {
  let cluster: Cluster;
  let system: string;
  let apps: string;
  let tagged: string;
  let tags: TagWatcher;
  let source: KubeSource;
  let writer: IngressStatusWriter;
  const id = Date.now().toString(36);
  const revision = `ing-${id}`;
  const ours = `ours-${id}`;
  const theirs = `theirs-${id}`;
  const ingressPath = (ns: string, name = "") =>
    `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses${name ? `/${name}` : ""}`;
  const addresses = async (ns: string, name: string) =>
    ((await cluster.must("GET", ingressPath(ns, name))).body as IngressObject).status?.loadBalancer?.ingress;
  const ingress = (name: string, labels: Record<string, string> = {}) => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, labels, annotations: { "kubernetes.io/ingress.class": "istio" } },
    spec: { defaultBackend: { service: { name: "web", port: { number: 80 } } } },
  });

  before(async () => {
    cluster = await sharedCluster();
    const selected = { [SELECT_LABEL]: id };
    system = await cluster.namespace("ingress-status-system", selected);
    apps = await cluster.namespace("ingress-status", selected);
    tagged = await cluster.namespace("ingress-status-tagged", { ...selected, "istio.io/rev": ours });
    await pointTag(cluster, ours, revision);
    await pointTag(cluster, theirs, `elsewhere-${id}`);
    // The ingress gateway's Service: its external name is every handled Ingress's address.
    await cluster.must("POST", `/api/v1/namespaces/${system}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "istio-ingressgateway" },
      spec: { type: "ExternalName", externalName: "lb.example.com" },
    });
    const store = new ConfigStore();
    source = new KubeSource({
      kubeConfig: cluster.kubeConfig(),
      writer: store,
      discoverySelectors: [{ matchLabels: selected }],
      kinds: KINDS.filter((k) => WATCHED.includes(k.kind)),
    });
    await source.start();
    tags = new TagWatcher({ client: new KubeClient(cluster.kubeConfig()), revision, systemNamespace: system });
    tags.start();
    await tags.synced;
    const namespaceLabels = (name: string | undefined) => {
      const namespace = name ? store.get({ kind: kindKey("", "Namespace"), namespace: "", name }) : undefined;
      return namespace ? (namespace.object.metadata.labels ?? {}) : undefined;
    };
    writer = new IngressStatusWriter({
      store,
      target: source,
      meshes: new MeshWatcher(),
      ingressNamespace: system,
      owns: (obj) => tags.isMine(obj.metadata, namespaceLabels(obj.metadata.namespace)),
      onOwnsChange: (listener) => tags.onChange(listener),
    });
    writer.start();
  });
  after(async () => {
    writer?.stop();
    tags?.stop();
    source?.stop();
    for (const tag of [ours, theirs]) await cluster?.request("DELETE", tagWebhookPath(tag));
  });

  test("ours get the gateway's address, another revision's is left alone until its tag names this revision", async () => {
    // Another revision's first, so that it is looked at before ours are written.
    await cluster.must("POST", ingressPath(apps), ingress("theirs", { "istio.io/rev": theirs }));
    await cluster.must("POST", ingressPath(apps), ingress("ours", { "istio.io/rev": ours }));
    // Unlabelled, in a namespace labelled with our tag.
    await cluster.must("POST", ingressPath(tagged), ingress("by-namespace"));
    // Unlabelled, in an unlabelled namespace: the default revision's, which this one is not.
    await cluster.must("POST", ingressPath(apps), ingress("unlabelled"));
    const address = [{ hostname: "lb.example.com" }];
    await waitFor(async () => (await addresses(apps, "ours")) !== undefined, "our Ingress's status");
    await waitFor(async () => (await addresses(tagged, "by-namespace")) !== undefined, "the tagged namespace's");
    assert.deepEqual(await addresses(apps, "ours"), address);
    assert.deepEqual(await addresses(tagged, "by-namespace"), address);
    // The status written as istiod's UpdateStatus: an update of the subresource under pilot-discovery.
    const written = writers((await cluster.must("GET", ingressPath(apps, "ours"))).body);
    assert.deepEqual(
      written.filter(([, , subresource]) => subresource === "status"),
      [["pilot-discovery", "Update", "status"]],
    );
    assert.equal(await addresses(apps, "theirs"), undefined);
    assert.equal(await addresses(apps, "unlabelled"), undefined);
    // The tag moved to this revision: its Ingress is ours now, and written.
    await pointTag(cluster, theirs, revision);
    await waitFor(async () => (await addresses(apps, "theirs")) !== undefined, "the moved tag's Ingress");
    assert.deepEqual(await addresses(apps, "theirs"), address);
    assert.equal(await addresses(apps, "unlabelled"), undefined);
  });
});
