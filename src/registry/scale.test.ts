import assert from "node:assert/strict";
import { test } from "node:test";
import { istio, k8s, staticInputs } from "../../test/support/registry-inputs.ts";
import { SYNTHETIC_1000, syntheticMesh, syntheticPod, syntheticSlice } from "../../test/support/synthetic-mesh.ts";
import type { ConfigObject } from "../config/index.ts";
import { DebugRegistry } from "../krt/index.ts";
import { ServiceRegistry } from "./index.ts";

const shape = SYNTHETIC_1000;
const pod = (i: number, slot: number, labels: Record<string, string> = {}) => syntheticPod(shape, i, slot, labels);
const slice = (i: number, part: number, ready = true) => syntheticSlice(shape, i, part, ready);

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
  const objects: ConfigObject[] = syntheticMesh(shape);
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
  assert.equal(registry.services.size, shape.services + 10);
  assert.equal(
    registry.endpoints.list().reduce((n, e) => n + e.endpoints.length, 0),
    shape.services * shape.slicesPerService * shape.endpointsPerSlice,
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
