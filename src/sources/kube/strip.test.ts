import assert from "node:assert/strict";
import { test } from "node:test";
import type { ConfigObject } from "../../config/index.ts";
import { stripUnusedFields } from "./strip.ts";

const managedFields = [{ manager: "kubectl", operation: "Apply", fieldsV1: { "f:spec": {} } }];

test("managedFields go from every kind; an object without any comes back as it was", () => {
  const vs: ConfigObject = {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "a", namespace: "ns", resourceVersion: "7", managedFields },
    spec: { hosts: ["a"] },
  };
  assert.deepEqual(stripUnusedFields(vs), { ...vs, metadata: { name: "a", namespace: "ns", resourceVersion: "7" } });
  const plain: ConfigObject = { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { ports: [] } };
  assert.equal(stripUnusedFields(plain), plain);
});

test("a Pod keeps its container ports, native sidecars with ports, where it runs and its status without container statuses", () => {
  const pod: ConfigObject = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "p",
      namespace: "ns",
      labels: { app: "a" },
      annotations: { "sidecar.istio.io/status": "{}", "proxy.istio.io/overrides": "{...}" },
      managedFields,
    },
    spec: {
      containers: [
        { name: "app", image: "app:1", ports: [{ name: "http", containerPort: 8080 }], env: [{ name: "X" }] },
        { name: "istio-proxy", image: "proxyv2", args: ["proxy"] },
      ],
      initContainers: [
        { name: "init", image: "init" },
        { name: "sidecar", restartPolicy: "Always", ports: [{ name: "grpc", containerPort: 9090 }] },
      ],
      serviceAccountName: "sa",
      nodeName: "node-0",
      hostNetwork: false,
      volumes: [{ name: "v" }],
    },
    status: {
      phase: "Running",
      podIP: "10.0.0.1",
      conditions: [{ type: "Ready", status: "True" }],
      containerStatuses: [{ name: "app" }],
      initContainerStatuses: [{ name: "init" }],
    },
  };
  assert.deepEqual(stripUnusedFields(pod), {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "ns", labels: { app: "a" }, annotations: { "sidecar.istio.io/status": "{}" } },
    spec: {
      containers: [{ ports: [{ name: "http", containerPort: 8080 }] }],
      initContainers: [{ ports: [{ name: "grpc", containerPort: 9090 }], restartPolicy: "Always" }],
      serviceAccountName: "sa",
      nodeName: "node-0",
      hostNetwork: false,
    },
    status: { phase: "Running", podIP: "10.0.0.1", conditions: [{ type: "Ready", status: "True" }] },
  });
});

test("a Node keeps its labels and addresses", () => {
  const node: ConfigObject = {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: "n", labels: { "topology.kubernetes.io/zone": "z" }, annotations: { a: "b" }, managedFields },
    spec: { podCIDR: "10.0.0.0/24" },
    status: { addresses: [{ type: "InternalIP", address: "1.2.3.4" }], images: [{ names: ["x"] }], capacity: {} },
  };
  assert.deepEqual(stripUnusedFields(node), {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: "n", labels: { "topology.kubernetes.io/zone": "z" } },
    spec: { podCIDR: "10.0.0.0/24" },
    status: { addresses: [{ type: "InternalIP", address: "1.2.3.4" }] },
  });
});
