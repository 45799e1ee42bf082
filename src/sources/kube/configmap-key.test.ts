// Keys of one ConfigMap read and followed against a real API server (test/cluster): a change of
// another key is not reported, one of a followed key reports every followed key's text, a deleted
// ConfigMap reports them missing, a recreated one reports them again.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Cluster, clusterSkipReason, sharedCluster } from "../../../test/cluster/index.ts";
import { waitFor } from "../../../test/support/xds-fixtures.ts";
import { KubeClient } from "./client.ts";
import {
  type ConfigMapKeysWatch,
  type ConfigMapTexts,
  readConfigMapKeys,
  watchConfigMapKeys,
} from "./configmap-key.ts";

const skip = clusterSkipReason();

describe("ConfigMap keys", { skip }, () => {
  let cluster: Cluster;
  let client: KubeClient;
  let namespace: string;
  let watch: ConfigMapKeysWatch | undefined;
  const keys = ["config", "values"];
  const path = () => `/api/v1/namespaces/${namespace}/configmaps/injector`;
  const put = async (data: Record<string, string>) => {
    const current = await cluster.must("GET", path());
    await cluster.must("PUT", path(), { ...current.body, data });
  };

  before(async () => {
    cluster = await sharedCluster();
    client = new KubeClient(cluster.kubeConfig());
    namespace = await cluster.namespace("configmap-keys");
  });
  after(() => watch?.stop());

  test("are read, then followed", async () => {
    assert.deepEqual(await readConfigMapKeys(client, namespace, "injector", keys), {
      config: undefined,
      values: undefined,
    });
    await cluster.must("POST", `/api/v1/namespaces/${namespace}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "injector" },
      data: { config: "c1", values: "v1", other: "o1" },
    });
    // Another ConfigMap of the namespace is not followed.
    await cluster.must("POST", `/api/v1/namespaces/${namespace}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "unrelated" },
      data: { config: "u1" },
    });
    const initial = await readConfigMapKeys(client, namespace, "injector", keys);
    assert.deepEqual(initial, { config: "c1", values: "v1" });

    const seen: ConfigMapTexts[] = [];
    watch = watchConfigMapKeys(client, { namespace, name: "injector", keys }, initial, (texts) => seen.push(texts));
    await put({ config: "c1", values: "v1", other: "o2" });
    await put({ config: "c2", values: "v1", other: "o2" });
    await waitFor(() => seen.length > 0, "the config key's change");
    // The change of `other` came first and was not reported.
    assert.deepEqual(seen, [{ config: "c2", values: "v1" }]);

    await cluster.must("DELETE", path());
    await waitFor(() => seen.length > 1, "the deletion");
    assert.deepEqual(seen[1], { config: undefined, values: undefined });

    await cluster.must("POST", `/api/v1/namespaces/${namespace}/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "injector" },
      data: { values: "v3" },
    });
    await waitFor(() => seen.length > 2, "the recreated ConfigMap");
    assert.deepEqual(seen.slice(2), [{ config: undefined, values: "v3" }]);
  });

  test("without an initial read, the first listing is told, a missing ConfigMap too", async () => {
    const seen: ConfigMapTexts[] = [];
    const missing = watchConfigMapKeys(client, { namespace, name: "absent", keys }, undefined, (t) => seen.push(t));
    try {
      await waitFor(() => seen.length > 0, "the first listing");
      assert.deepEqual(seen, [{ config: undefined, values: undefined }]);
    } finally {
      missing.stop();
    }
  });
});
