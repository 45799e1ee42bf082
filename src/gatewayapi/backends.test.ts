import assert from "node:assert/strict";
import { test } from "node:test";
import { effectiveWeights, weightSum } from "./backends.ts";
import { inferencePoolServiceName } from "./inference-service.ts";

test("an InferencePool's shadow Service is <pool>-ip-<first 8 hex of sha256(pool)>", () => {
  assert.equal(inferencePoolServiceName("infpool-gen"), "infpool-gen-ip-6580eb2c");
  assert.equal(inferencePoolServiceName("infpool-model1"), "infpool-model1-ip-aaaaf2d6");
  assert.ok(inferencePoolServiceName("x".repeat(80)).length <= 63);
});

test("zero weights are dropped and a single remaining backend carries no weight", () => {
  const refs = [
    { name: "a", weight: 0 },
    { name: "b", weight: 3 },
  ];
  assert.deepEqual(
    effectiveWeights(refs).map((w) => [w.ref.name, w.weight]),
    [["b", 0]],
  );
  assert.deepEqual(
    effectiveWeights([{ name: "a" }, { name: "b", weight: 2 }]).map((w) => w.weight),
    [1, 2],
  );
  assert.equal(weightSum([{}, { weight: 0 }]), 1);
});
