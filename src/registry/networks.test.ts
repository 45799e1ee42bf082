// An endpoint's network: its workload's label, else the system namespace's label, else meshNetworks
// (fromRegistry naming this cluster, then fromCidr) — recomputed when the system namespace or the mesh
// networks change.
import assert from "node:assert/strict";
import { test } from "node:test";
import { istio, k8s, staticInputs } from "../../test/support/registry-inputs.ts";
import type { ConfigObject } from "../config/index.ts";
import { loadMeshNetworks } from "../config/mesh-networks.ts";
import { ServiceRegistry } from "./index.ts";

const pod = (name: string, ip: string, labels: Record<string, string> = {}) =>
  k8s("Pod", "default", name, {
    metadata: { labels: { app: "reviews", ...labels } },
    spec: { containers: [{ name: "app", image: "app" }] },
    status: { phase: "Running", podIP: ip, conditions: [{ type: "Ready", status: "True" }] },
  });
const systemNamespace = (labels: Record<string, string>): ConfigObject => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: "istio-system", labels },
});

const OBJECTS = [
  pod("labelled", "10.2.0.1", { "topology.istio.io/network": "own" }),
  pod("in-cidr", "10.2.0.2"),
  pod("elsewhere", "10.9.0.1"),
  istio("WorkloadEntry", "default", "vm", { address: "10.2.0.3" }),
  istio("WorkloadEntry", "default", "vm-own", { address: "10.2.0.4", network: "vm-net" }),
  systemNamespace({}),
];

function networks(registry: ServiceRegistry): Record<string, string> {
  return Object.fromEntries(
    registry.workloads
      .list()
      .map((w) => [w.name, w.network])
      .sort(([a = ""], [b = ""]) => a.localeCompare(b)),
  );
}

test("fromCidr places workloads without a network; labels and WorkloadEntry networks win", () => {
  const inputs = staticInputs(OBJECTS);
  const registry = new ServiceRegistry(inputs, {
    meshNetworks: loadMeshNetworks("networks: {cidr-net: {endpoints: [{fromCidr: 10.2.0.0/16}]}}"),
  });
  assert.deepEqual(networks(registry), {
    elsewhere: "",
    "in-cidr": "cidr-net",
    labelled: "own",
    vm: "cidr-net",
    "vm-own": "vm-net",
  });
  // The derived network is a topology label too, as Istio's AugmentLabels adds it.
  assert.equal(registry.workloads.get("Pod/default/in-cidr")?.labels["topology.istio.io/network"], "cidr-net");

  // The system namespace's label is the cluster's default network, before meshNetworks.
  inputs.namespaces.upsert(systemNamespace({ "topology.istio.io/network": "cluster-net" }));
  assert.deepEqual(networks(registry), {
    elsewhere: "cluster-net",
    "in-cidr": "cluster-net",
    labelled: "own",
    vm: "cluster-net",
    "vm-own": "vm-net",
  });
  inputs.namespaces.upsert(systemNamespace({}));
  assert.equal(registry.workloads.get("Pod/default/in-cidr")?.network, "cidr-net");
});

test("new mesh networks re-assign the networks taken from them, and only those", () => {
  const registry = new ServiceRegistry(staticInputs(OBJECTS), {
    meshNetworks: loadMeshNetworks("networks: {cidr-net: {endpoints: [{fromCidr: 10.2.0.0/16}]}}"),
  });
  registry.setMeshNetworks(loadMeshNetworks("networks: {wide: {endpoints: [{fromCidr: 10.0.0.0/8}]}}"));
  assert.deepEqual(networks(registry), {
    elsewhere: "wide",
    "in-cidr": "wide",
    labelled: "own",
    vm: "wide",
    "vm-own": "vm-net",
  });
  assert.deepEqual(Object.keys(registry.meshNetworks?.networks ?? {}), ["wide"]);
  registry.setMeshNetworks(loadMeshNetworks(""));
  assert.equal(registry.workloads.get("Pod/default/in-cidr")?.network, "");
});

test("a network whose endpoints name this cluster fromRegistry takes every workload without a network", () => {
  const meshNetworks = loadMeshNetworks(`
networks:
  cidr-net: {endpoints: [{fromCidr: 10.2.0.0/16}]}
  registry-net: {endpoints: [{fromRegistry: east}]}
`);
  const east = new ServiceRegistry(staticInputs(OBJECTS), { clusterId: "east", meshNetworks });
  assert.deepEqual(networks(east), {
    elsewhere: "registry-net",
    "in-cidr": "registry-net",
    labelled: "own",
    vm: "registry-net",
    "vm-own": "vm-net",
  });
  const west = new ServiceRegistry(staticInputs(OBJECTS), { clusterId: "west", meshNetworks });
  assert.equal(west.workloads.get("Pod/default/in-cidr")?.network, "cidr-net");
  assert.equal(west.workloads.get("Pod/default/elsewhere")?.network, "");
});
