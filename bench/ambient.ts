// Issue 30's budget: one Pod change in the ambient index (workloads as ztunnel's Addresses) must cost
// microseconds, far less than building the index anew (Istio reports ~1.3 µs per incremental update
// against ~0.9 ms for a full one). The mesh is the registry bench's: 1,000 services, 10,000 Pods.
import { AmbientIndex } from "../src/ambient/index.ts";
import type { ConfigObject } from "../src/config/index.ts";
import type { AuthorizationPolicy, gatewayapi, PeerAuthentication } from "../src/config/types/index.ts";
import { StaticCollection } from "../src/krt/index.ts";
import { AMBIENT_OPTIONS } from "../test/support/ambient-options.ts";
import { staticInputs } from "../test/support/registry-inputs.ts";
import { SYNTHETIC_1000, syntheticMesh, syntheticPod } from "../test/support/synthetic-mesh.ts";
import { measure } from "./measure.ts";
import type { BenchResult } from "./run.ts";

function ambientIndex(objects: readonly ConfigObject[]) {
  const inputs = staticInputs(objects);
  const index = new AmbientIndex(
    {
      pods: inputs.pods,
      services: inputs.services,
      serviceEntries: inputs.serviceEntries,
      workloadEntries: inputs.workloadEntries,
      namespaces: inputs.namespaces,
      nodes: inputs.nodes,
      authorizationPolicies: new StaticCollection<AuthorizationPolicy>(),
      peerAuthentications: new StaticCollection<PeerAuthentication>(),
      gateways: new StaticCollection<gatewayapi.Gateway>(),
      gatewayClasses: new StaticCollection<ConfigObject>(),
    },
    AMBIENT_OPTIONS,
  );
  return { inputs, index };
}

export function benchAmbient(): BenchResult[] {
  const shape = SYNTHETIC_1000;
  const objects = syntheticMesh(shape);
  const full = measure(5, () => {
    ambientIndex(objects);
  });

  const { inputs, index } = ambientIndex(objects);
  const pods = shape.slicesPerService * shape.endpointsPerSlice;
  // A different Pod each run goes unready, or ready again: one workload's Address changes.
  const change = measure(2000, (run) => {
    const pod = syntheticPod(shape, (run * 37) % shape.services, run % pods) as ConfigObject;
    const ready = Math.floor(run / shape.services) % 2 === 1;
    inputs.pods.upsert({
      ...pod,
      status: { ...(pod.status as object), conditions: [{ type: "Ready", status: String(ready) }] },
    });
  });
  if (index.workloads.size === 0) throw new Error("the ambient index holds no workloads");

  const name = "ambient index: 1,000 services / 10,000 pods";
  return [
    { name: `${name}, full build`, ...full },
    { name: `${name}, one Pod change`, ...change, ratio: full.medianUs / change.medianUs },
  ];
}
