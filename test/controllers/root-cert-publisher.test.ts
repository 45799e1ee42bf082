// The root certificate published into every namespace the control plane sees, against a real API
// server (test/cluster), through the Kubernetes source and the store as sluiced runs it: created,
// recreated when deleted, its key restored when edited (other keys kept), rewritten everywhere when
// the roots rotate, and never written into a namespace discoverySelectors leave out.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { KINDS, kindKey } from "../../src/config/index.ts";
import { ROOT_CERT_CONFIGMAP, ROOT_CERT_KEY, RootCertPublisher } from "../../src/controllers/index.ts";
import { ConfigStore } from "../../src/sources/index.ts";
import { KubeClient, KubeSource } from "../../src/sources/kube/index.ts";
import { type Cluster, clusterSkipReason, sharedCluster } from "../cluster/index.ts";
import { writers } from "../support/managed-fields.ts";
import { waitFor } from "../support/xds-fixtures.ts";

const skip = clusterSkipReason();

interface ConfigMapBody {
  metadata: { labels?: Record<string, string>; resourceVersion: string };
  data?: Record<string, string>;
}

describe("RootCertPublisher", { skip }, () => {
  let cluster: Cluster;
  let source: KubeSource;
  let publisher: RootCertPublisher;
  let selected: string;
  let other: string;
  let unselected: string;
  let root = "-----BEGIN CERTIFICATE-----\nroot one\n-----END CERTIFICATE-----\n";
  const rootListeners = new Set<() => void>();
  const path = (ns: string) => `/api/v1/namespaces/${ns}/configmaps/${ROOT_CERT_CONFIGMAP}`;
  const read = async (ns: string) => {
    const res = await cluster.request("GET", path(ns));
    return res.status === 404 ? undefined : (res.body as ConfigMapBody);
  };
  const published = async (ns: string, pem: string) => (await read(ns))?.data?.[ROOT_CERT_KEY] === pem;

  before(async () => {
    cluster = await sharedCluster();
    // The shared cluster holds other tests' namespaces: select only this test's.
    const label = `root-cert-${Date.now().toString(36)}`;
    selected = await cluster.namespace("root-cert-a", { "sluice.test/root-cert": label });
    unselected = await cluster.namespace("root-cert-none");
    const store = new ConfigStore();
    source = new KubeSource({
      kubeConfig: cluster.kubeConfig(),
      writer: store,
      discoverySelectors: [{ matchLabels: { "sluice.test/root-cert": label } }],
      kinds: KINDS.filter((k) => k.group === "" && (k.kind === "Namespace" || k.kind === "ConfigMap")),
    });
    await source.start();
    publisher = new RootCertPublisher({
      client: new KubeClient(cluster.kubeConfig()),
      namespaces: store.collection(kindKey("", "Namespace")),
      configMaps: store.collection(kindKey("", "ConfigMap")),
      rootCert: () => root,
      onRootCertChange: (listener) => {
        rootListeners.add(listener);
        return () => rootListeners.delete(listener);
      },
    });
    publisher.start();
    other = await cluster.namespace("root-cert-b", { "sluice.test/root-cert": label });
  });
  after(() => {
    publisher?.stop();
    source?.stop();
  });

  test("every selected namespace gets the ConfigMap, labelled istio.io/config", async () => {
    await waitFor(async () => (await published(selected, root)) && (await published(other, root)), "the ConfigMaps");
    assert.deepEqual((await read(selected))?.metadata.labels, { "istio.io/config": "true" });
    assert.deepEqual(Object.keys((await read(other))?.data ?? {}), [ROOT_CERT_KEY]);
    // Created as istiod creates it: an update under its user agent's command.
    assert.deepEqual(writers(await read(selected)), [["pilot-discovery", "Update", ""]]);
  });

  test("a namespace discoverySelectors leave out gets none", async () => {
    await waitFor(() => published(other, root), "the ConfigMap in a selected namespace");
    await publisher.settled();
    assert.equal(await read(unselected), undefined);
  });

  test("a deleted ConfigMap is made again", async () => {
    await waitFor(() => published(selected, root), "the ConfigMap");
    await cluster.must("DELETE", path(selected));
    await waitFor(() => published(selected, root), "the ConfigMap made again");
  });

  test("an edited key is set back and the other keys are kept", async () => {
    await waitFor(() => published(other, root), "the ConfigMap");
    const current = await read(other);
    await cluster.must("PUT", path(other), {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: ROOT_CERT_CONFIGMAP, namespace: other, resourceVersion: current?.metadata.resourceVersion },
      data: { [ROOT_CERT_KEY]: "not a root", extra: "kept" },
    });
    await waitFor(() => published(other, root), "the key set back");
    assert.equal((await read(other))?.data?.extra, "kept");
  });

  test("new roots are written into every namespace", async () => {
    await waitFor(async () => (await published(selected, root)) && (await published(other, root)), "the ConfigMaps");
    root = "-----BEGIN CERTIFICATE-----\nroot two\n-----END CERTIFICATE-----\n";
    for (const listener of rootListeners) listener();
    await waitFor(async () => (await published(selected, root)) && (await published(other, root)), "the new roots");
  });
});
