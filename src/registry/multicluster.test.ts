// Remote clusters in the registry: their Services merge with the config cluster's of the same hostname
// (Istio's aggregate registry), their endpoints carry their cluster ID, and they come and go whole.
import assert from "node:assert/strict";
import { test } from "node:test";
import { k8s, staticInputs } from "../../test/support/registry-inputs.ts";
import { ServiceRegistry } from "./index.ts";

const HOST = "reviews.default.svc.cluster.local";

const service = (clusterIP: string, created: string) =>
  k8s("Service", "default", "reviews", {
    metadata: { creationTimestamp: created },
    spec: { clusterIP, selector: { app: "reviews" }, ports: [{ name: "http", port: 9080 }] },
  });
const pod = (ip: string) =>
  k8s("Pod", "default", "reviews-1", {
    metadata: { labels: { app: "reviews" } },
    spec: { serviceAccountName: "reviews", nodeName: "node-1" },
    status: { phase: "Running", podIP: ip, conditions: [{ type: "Ready", status: "True" }] },
  });
const slice = (ip: string) =>
  k8s("EndpointSlice", "default", "reviews-1", {
    metadata: { labels: { "kubernetes.io/service-name": "reviews" } },
    endpoints: [{ addresses: [ip], targetRef: { kind: "Pod", name: "reviews-1", namespace: "default" } }],
    ports: [{ name: "http", port: 9080 }],
  });

/** The cluster of each endpoint of the reviews port, as `cluster:address`. */
const endpoints = (registry: ServiceRegistry) =>
  registry.endpointsFor(HOST, 9080, "default").map((e) => `${e.clusterId}:${e.address}`);

test("a remote cluster's endpoints join the config cluster's service of the same hostname, marked with its cluster", () => {
  // The same object names in both clusters: each cluster's objects stay apart.
  const local = staticInputs([service("10.96.0.10", "2025-01-01T00:00:00Z"), pod("10.0.0.1"), slice("10.0.0.1")]);
  const registry = new ServiceRegistry(local, { clusterId: "east" });
  const remote = staticInputs([service("10.200.0.10", "2020-01-01T00:00:00Z"), pod("10.1.0.1"), slice("10.1.0.1")]);
  registry.addCluster("west", remote);
  assert.deepEqual(endpoints(registry), ["east:10.0.0.1", "west:10.1.0.1"]);
  // The config cluster's Service stands for the host, although the remote one is older.
  assert.equal(registry.service(HOST, "default")?.defaultAddress, "10.96.0.10");
  assert.deepEqual(registry.remoteClusters(), ["west"]);
  const west = registry.endpointsFor(HOST, 9080, "default")[1];
  assert.equal(west?.labels["topology.istio.io/cluster"], "west");
  assert.equal(west?.identity, "spiffe://cluster.local/ns/default/sa/reviews");

  // Followed while added.
  remote.endpointSlices.upsert(slice("10.1.0.2"));
  remote.pods.upsert(pod("10.1.0.2"));
  assert.deepEqual(endpoints(registry), ["east:10.0.0.1", "west:10.1.0.2"]);

  registry.removeCluster("west");
  assert.deepEqual(endpoints(registry), ["east:10.0.0.1"]);
  assert.deepEqual(registry.remoteClusters(), []);
});

test("a service only a remote cluster has is served with its endpoints; replacing the cluster swaps them", () => {
  const registry = new ServiceRegistry(staticInputs(), { clusterId: "east" });
  registry.addCluster("west", staticInputs([service("10.200.0.10", ""), pod("10.1.0.1"), slice("10.1.0.1")]));
  assert.equal(registry.service(HOST, "default")?.defaultAddress, "10.200.0.10");
  assert.deepEqual(endpoints(registry), ["west:10.1.0.1"]);
  // A changed secret: the cluster's new view replaces the old one.
  registry.addCluster("west", staticInputs([service("10.200.0.10", ""), pod("10.1.0.9"), slice("10.1.0.9")]));
  assert.deepEqual(endpoints(registry), ["west:10.1.0.9"]);
  registry.removeCluster("west");
  assert.equal(registry.service(HOST, "default"), undefined);
  assert.deepEqual(endpoints(registry), []);
  assert.throws(() => registry.addCluster("east", staticInputs()), /cluster east is the registry's own cluster/);
});
