// Issue 3's budget: one endpoint change in a 1,000-service / 10,000-endpoint store must cost far
// less than rebuilding the registry. Full build = a new ServiceRegistry over loaded inputs.
import { ServiceRegistry } from "../src/registry/index.ts";
import { staticInputs } from "../test/support/registry-inputs.ts";
import { SYNTHETIC_1000, syntheticMesh, syntheticSlice } from "../test/support/synthetic-mesh.ts";
import { measure } from "./measure.ts";
import type { BenchResult } from "./run.ts";

export function benchRegistry(): BenchResult[] {
  const shape = SYNTHETIC_1000;
  const objects = syntheticMesh(shape);
  const full = measure(5, () => {
    new ServiceRegistry(staticInputs(objects));
  });

  const inputs = staticInputs(objects);
  const registry = new ServiceRegistry(inputs);
  // Flip one slice of a different service each run between ready and not ready.
  const change = measure(500, (run) => {
    inputs.endpointSlices.upsert(syntheticSlice(shape, (run * 37) % shape.services, 1, run % 2 === 1));
  });
  if (registry.endpoints.size === 0) throw new Error("registry produced no endpoints");

  const name = "registry: 1,000 services / 10,000 endpoints";
  return [
    { name: `${name}, full build`, ...full },
    { name: `${name}, one EndpointSlice change`, ...change, ratio: full.medianUs / change.medianUs },
  ];
}
