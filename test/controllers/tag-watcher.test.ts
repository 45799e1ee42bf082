// The tag watcher against a real API server (test/cluster): tags from MutatingWebhookConfigurations
// and the system namespace's Services, a tag moved away, and listeners told of each change. The
// revision and tags are this file's own: webhook configurations are cluster-wide, shared by every test.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { TagWatcher } from "../../src/controllers/index.ts";
import { KubeClient } from "../../src/sources/kube/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { pointTag, tagWebhookPath } from "../support/revision-tags.ts";
import { waitFor } from "../support/xds-fixtures.ts";

const skip = clusterSkipReason();

describe("TagWatcher", { skip }, () => {
  let cluster: Cluster;
  let system: string;
  let tags: TagWatcher;
  let changes = 0;
  const id = Date.now().toString(36);
  const revision = `rt-${id}`;
  const tag = `prod-${id}`;

  before(async () => {
    cluster = await sharedCluster();
    system = await cluster.namespace("tag-watcher");
    tags = new TagWatcher({ client: new KubeClient(cluster.kubeConfig()), revision, systemNamespace: system });
    tags.onChange(() => changes++);
    tags.start();
    await tags.synced;
  });
  after(async () => {
    tags?.stop();
    await cluster?.request("DELETE", tagWebhookPath(tag));
  });

  test("a tag's webhook naming the revision makes objects labelled with the tag its own, until it moves", async () => {
    assert.deepEqual([...tags.myTags()], [revision]);
    assert.equal(tags.isMine({ labels: { "istio.io/rev": tag } }, {}), false);
    const before = changes;
    await pointTag(cluster, tag, revision);
    await waitFor(() => tags.myTags().has(tag), "the tag");
    assert.ok(changes > before);
    assert.equal(tags.isMine({ labels: { "istio.io/rev": tag } }, {}), true);
    // Unlabelled, in a namespace labelled with the tag.
    assert.equal(tags.isMine({}, { "istio.io/rev": tag }), true);
    // Moved to another revision: no longer this one's.
    await pointTag(cluster, tag, "elsewhere");
    await waitFor(() => !tags.myTags().has(tag), "the tag gone");
    assert.equal(tags.isMine({ labels: { "istio.io/rev": tag } }, {}), false);
  });

  test("a tag Service in the system namespace is a tag too; elsewhere it is not", async () => {
    const service = (name: string, tagName: string) => ({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, labels: { "istio.io/tag": tagName, "istio.io/rev": revision } },
      spec: { ports: [{ port: 15012, name: "grpc-xds" }] },
    });
    const elsewhere = await cluster.namespace("tag-watcher-other");
    await cluster.must("POST", `/api/v1/namespaces/${elsewhere}/services`, service("istiod-other", `other-${id}`));
    await cluster.must("POST", `/api/v1/namespaces/${system}/services`, service(`istiod-svc-${id}`, `svc-${id}`));
    await waitFor(() => tags.myTags().has(`svc-${id}`), "the Service's tag");
    assert.equal(tags.myTags().has(`other-${id}`), false);
    assert.equal(tags.isMine({ labels: { "istio.io/rev": `svc-${id}` } }, undefined), true);
  });

  test("unlabelled objects are not a non-default revision's without the default tag or validator naming it", () => {
    assert.equal(tags.isMine({}, {}), false);
    // An object of no known namespace is everyone's.
    assert.equal(tags.isMine({}, undefined), true);
  });
});
