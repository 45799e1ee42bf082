// The EDS the micro benchmarks time (bench/templates-bench.ts endpointBenchmarks, Istio's
// BenchmarkEndpointGeneration) and the EDS of the http template's sidecar stay the same bytes while
// endpoint generation is optimised: a SHA-256 over the encoded load assignments, recorded from the code
// before the optimisation, and every assignment within Envoy's constraints.
// After a deliberate change of the generated config, print the new digests with UPDATE_GOLDEN=1.
import assert from "node:assert/strict";
import { test } from "node:test";
import { benchProxy, template, templateState } from "../bench/templates.ts";
import { endpointsConfig } from "../bench/templates-bench.ts";
import { buildClusters } from "../src/xds/generators/cds.ts";
import { buildLoadAssignment } from "../src/xds/generators/eds.ts";
import { xdsCaches } from "../src/xds/generators/index.ts";
import { goldenDigest } from "./golden-digest.ts";

const BENCHMARK_GOLDEN: Record<string, string> = {
  "1/100": "3f807de42787835736113abd11f508a5503bd9781a3996e0188d1fffdf5e2c43",
  "10/10": "2d70b6a179249176b14b076a7371ae3aa32c957c01b1d699cc05a738c703588d",
  "100/10": "420737a09c374d00bbfa985f53a5939a8d1707fbefb5141b04e9771fa7cd5c89",
  "1000/1": "401baa7f720c03522e6208b2fb80e55700becdf55eb4a73b64db1e73e84596c9",
};

for (const [shape, golden] of Object.entries(BENCHMARK_GOLDEN)) {
  const [endpoints, services] = shape.split("/").map(Number);
  test(`EDS benchmark, ${endpoints} endpoints / ${services} services: bytes unchanged`, () => {
    xdsCaches.clear();
    const state = templateState(endpointsConfig(endpoints, services));
    const proxy = benchProxy("sidecar", { ip: "10.3.3.3", id: "random.default", labels: {} });
    const clusters = Array.from({ length: services }, (_, s) => `outbound|80||foo-${s}.com`);
    const assignments = clusters.map((c) => buildLoadAssignment(state.push, proxy, state.registry, c));
    assert.ok(
      assignments.every((a) => a.endpoints.length > 0),
      "every benchmark service has endpoints",
    );
    const sha = goldenDigest(assignments, shape);
    if (process.env.UPDATE_GOLDEN) console.log(`  "${shape}": "${sha}",`);
    assert.equal(sha, golden);
  });
}

const HTTP_GOLDEN = "eee390dc98cce3bebb365cc5319d9145e8a269eb795769c85b961995bf8c526a";

test("http template (sidecar, 100 services): EDS of its EDS clusters unchanged", () => {
  xdsCaches.clear();
  const state = templateState(template("http").render({ services: 100, instances: 100 }));
  const proxy = benchProxy("sidecar");
  const names = buildClusters(state.push, proxy, state.registry)
    .filter((c) => c.clusterDiscoveryType.case === "type" && c.edsClusterConfig !== undefined)
    .map((c) => c.name);
  assert.ok(names.length > 0, "the http template has EDS clusters");
  const assignments = names.map((name) => buildLoadAssignment(state.push, proxy, state.registry, name));
  assert.ok(
    assignments.some((a) => a.endpoints.length > 0),
    "some http template cluster has endpoints",
  );
  const sha = goldenDigest(assignments, "http");
  if (process.env.UPDATE_GOLDEN) console.log(`HTTP_GOLDEN = "${sha}"`);
  assert.equal(sha, HTTP_GOLDEN);
});
