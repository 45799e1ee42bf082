import assert from "node:assert/strict";
import { test } from "node:test";
import type { ConfigObject } from "../config/index.ts";
import { DebugRegistry } from "../krt/index.ts";
import { ServiceRegistry } from "./index.ts";
import { istio, k8s, staticInputs } from "./test-inputs.ts";

const SERVICES = 1000;
const SLICES_PER_SERVICE = 2;
const ENDPOINTS_PER_SLICE = 5;

const namespaceOf = (service: number) => `ns-${service % 10}`;
const ipOf = (service: number, slot: number) => `10.${service >> 8}.${service & 255}.${slot}`;

function service(i: number): ConfigObject {
  return k8s("Service", namespaceOf(i), `svc-${i}`, {
    spec: {
      clusterIP: `172.16.${i >> 8}.${i & 255}`,
      selector: { app: `svc-${i}` },
      ports: [{ name: "http", port: 80 }],
    },
  });
}

function pod(i: number, slot: number, labels: Record<string, string> = {}): ConfigObject {
  return k8s("Pod", namespaceOf(i), `svc-${i}-${slot}`, {
    metadata: { labels: { app: `svc-${i}`, ...labels } },
    spec: { nodeName: `node-${i % 50}`, containers: [] },
    status: { phase: "Running", podIP: ipOf(i, slot), conditions: [{ type: "Ready", status: "True" }] },
  });
}

function slice(i: number, part: number, ready = true): ConfigObject {
  const slots = Array.from({ length: ENDPOINTS_PER_SLICE }, (_, k) => part * ENDPOINTS_PER_SLICE + k);
  return k8s("EndpointSlice", namespaceOf(i), `svc-${i}-${part}`, {
    metadata: { labels: { "kubernetes.io/service-name": `svc-${i}` } },
    endpoints: slots.map((slot) => ({
      addresses: [ipOf(i, slot)],
      conditions: { ready, terminating: false },
      targetRef: { kind: "Pod", name: `svc-${i}-${slot}`, namespace: namespaceOf(i) },
    })),
    ports: [{ name: "http", port: 8080 }],
  });
}

function recomputes(debug: DebugRegistry): Map<string, number> {
  return new Map(debug.snapshot().map((c) => [c.name, c.recomputes]));
}

/** How many times each registry collection recomputed since `before`, for those that did. */
function delta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, count] of after) {
    const change = count - (before.get(name) ?? 0);
    if (change !== 0) out[name] = change;
  }
  return out;
}

test("1,000 services, 10,000 endpoints: one EndpointSlice or one Pod change recomputes only what it backs", () => {
  const objects: ConfigObject[] = [];
  for (let i = 0; i < SERVICES; i++) {
    objects.push(service(i));
    for (let part = 0; part < SLICES_PER_SERVICE; part++) objects.push(slice(i, part));
    for (let slot = 0; slot < SLICES_PER_SERVICE * ENDPOINTS_PER_SLICE; slot++) objects.push(pod(i, slot));
  }
  for (let n = 0; n < 50; n++) objects.push(k8s("Node", "", `node-${n}`, { metadata: { labels: {} } }));
  // ServiceEntries selecting workloads in the namespace of the changes below, but not those pods.
  for (let e = 0; e < 10; e++) {
    const spec = {
      hosts: [`vm-${e}.example.com`],
      ports: [{ number: 80, name: "http" }],
      workloadSelector: { labels: { vm: `${e}` } },
    };
    objects.push(istio("ServiceEntry", "ns-1", `vm-${e}`, { resolution: "STATIC", ...spec }));
  }
  const inputs = staticInputs(objects);
  const debug = new DebugRegistry();
  const registry = new ServiceRegistry(inputs, { debug });
  assert.equal(registry.services.size, SERVICES + 10);
  assert.equal(
    registry.endpoints.list().reduce((n, e) => n + e.endpoints.length, 0),
    SERVICES * SLICES_PER_SERVICE * ENDPOINTS_PER_SLICE,
  );
  const updates: string[] = [];
  registry.endpoints.registerBatch(
    (events) => updates.push(...events.map((e) => `${e.type}:${e.new?.hostname}`)),
    false,
  );

  let before = recomputes(debug);
  inputs.endpointSlices.upsert(slice(421, 1, false));
  assert.deepEqual(delta(before, recomputes(debug)), {
    "registry/kubernetes-endpoints": 1,
    "registry/all-endpoints": 1,
    "registry/endpoints": 1,
  });
  assert.deepEqual(updates, ["update:svc-421.ns-1.svc.cluster.local"]);
  const health = registry.endpointsFor("svc-421.ns-1.svc.cluster.local", 80, "ns-1").map((e) => e.health);
  assert.deepEqual(health, [...Array(5).fill("Healthy"), ...Array(5).fill("UnHealthy")]);

  // A pod relabelled: its workload, and the one service whose endpoints it backs.
  before = recomputes(debug);
  inputs.pods.upsert(pod(421, 3, { version: "v2" }));
  assert.deepEqual(delta(before, recomputes(debug)), {
    "registry/pod-workloads": 1,
    "registry/workloads": 1,
    "registry/kubernetes-endpoints": 1,
    "registry/all-endpoints": 1,
    "registry/endpoints": 1,
  });
  assert.equal(registry.endpointsFor("svc-421.ns-1.svc.cluster.local", 80, "ns-1")[3].labels.version, "v2");

  // A pod change nothing reads (an annotation) stops at the pod's workload: an equal output emits nothing.
  before = recomputes(debug);
  const annotated = pod(421, 4);
  inputs.pods.upsert({ ...annotated, metadata: { ...annotated.metadata, annotations: { note: "x" } } });
  assert.deepEqual(delta(before, recomputes(debug)), { "registry/pod-workloads": 1 });

  // A node relabelled: its 200 pods and the 20 services they back.
  before = recomputes(debug);
  inputs.nodes.upsert(k8s("Node", "", "node-21", { metadata: { labels: { "topology.kubernetes.io/zone": "z" } } }));
  assert.deepEqual(delta(before, recomputes(debug)), {
    "registry/pod-workloads": 200,
    "registry/workloads": 200,
    "registry/kubernetes-endpoints": 20,
    "registry/all-endpoints": 20,
    "registry/endpoints": 20,
  });
});
