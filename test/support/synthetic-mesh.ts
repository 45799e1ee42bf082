// A synthetic Kubernetes mesh of N services, each backed by EndpointSlices and Pods, for scale tests
// and benchmarks: the same objects a cluster would give the registry.
import type { ConfigObject } from "../../src/config/index.ts";
import { k8s } from "./registry-inputs.ts";

export interface SyntheticMeshShape {
  services: number;
  slicesPerService: number;
  endpointsPerSlice: number;
  nodes: number;
}

export const SYNTHETIC_1000: SyntheticMeshShape = {
  services: 1000,
  slicesPerService: 2,
  endpointsPerSlice: 5,
  nodes: 50,
};

export const syntheticNamespace = (service: number) => `ns-${service % 10}`;
const ipOf = (service: number, slot: number) => `10.${service >> 8}.${service & 255}.${slot}`;

export function syntheticService(i: number): ConfigObject {
  return k8s("Service", syntheticNamespace(i), `svc-${i}`, {
    spec: {
      clusterIP: `172.16.${i >> 8}.${i & 255}`,
      selector: { app: `svc-${i}` },
      ports: [{ name: "http", port: 80 }],
    },
  });
}

export function syntheticPod(shape: SyntheticMeshShape, i: number, slot: number, labels: Record<string, string> = {}) {
  return k8s("Pod", syntheticNamespace(i), `svc-${i}-${slot}`, {
    metadata: { labels: { app: `svc-${i}`, ...labels } },
    spec: { nodeName: `node-${i % shape.nodes}`, containers: [] },
    status: { phase: "Running", podIP: ipOf(i, slot), conditions: [{ type: "Ready", status: "True" }] },
  });
}

export function syntheticSlice(shape: SyntheticMeshShape, i: number, part: number, ready = true): ConfigObject {
  const slots = Array.from({ length: shape.endpointsPerSlice }, (_, k) => part * shape.endpointsPerSlice + k);
  return k8s("EndpointSlice", syntheticNamespace(i), `svc-${i}-${part}`, {
    metadata: { labels: { "kubernetes.io/service-name": `svc-${i}` } },
    endpoints: slots.map((slot) => ({
      addresses: [ipOf(i, slot)],
      conditions: { ready, terminating: false },
      targetRef: { kind: "Pod", name: `svc-${i}-${slot}`, namespace: syntheticNamespace(i) },
    })),
    ports: [{ name: "http", port: 8080 }],
  });
}

/** Every Service, EndpointSlice, Pod and Node of the mesh. */
export function syntheticMesh(shape: SyntheticMeshShape): ConfigObject[] {
  const objects: ConfigObject[] = [];
  for (let i = 0; i < shape.services; i++) {
    objects.push(syntheticService(i));
    for (let part = 0; part < shape.slicesPerService; part++) objects.push(syntheticSlice(shape, i, part));
    for (let slot = 0; slot < shape.slicesPerService * shape.endpointsPerSlice; slot++) {
      objects.push(syntheticPod(shape, i, slot));
    }
  }
  for (let n = 0; n < shape.nodes; n++) objects.push(k8s("Node", "", `node-${n}`, { metadata: { labels: {} } }));
  return objects;
}
