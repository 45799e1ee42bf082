// The EDS the micro benchmarks time (bench/templates-bench.ts endpointBenchmarks, Istio's
// BenchmarkEndpointGeneration) and the EDS of the http template's sidecar stay the same bytes while
// endpoint generation is optimised: a SHA-256 over the encoded load assignments, recorded from the code
// before the optimisation, and every assignment within Envoy's constraints.
// Each case runs with the xDS cache on and off (test/support/cache-modes.ts).
// After a deliberate change of the generated config, print the new digests with UPDATE_GOLDEN=1.
import assert from "node:assert/strict";
import { test } from "node:test";
import { benchProxy, template } from "../bench/templates.ts";
import { endpointsConfig } from "../bench/templates-bench.ts";
import { buildClusters, buildLoadAssignment } from "../src/configgen/index.ts";
import { CACHE_MODES, cacheModeDigests } from "./support/cache-modes.ts";

const BENCHMARK_GOLDEN: Record<string, string> = {
  "1/100": "bddc4876c927189d2aea6b2c62c300608a06afd241d2fba77aa8f63d234cb551",
  "10/10": "a7eb29c973f7d9a46ba4c4fb6f7c07bd4b1af8cca864063187809a1ca390540b",
  "100/10": "e7f8af8f2291cb746fab80d0bc88f62c22996201510654286f6bda20192d80ea",
  "1000/1": "cc7758a4e7d1a157a18891d2e9964e72e58a7d20b67c210c84980ff65bd7569d",
};

for (const [shape, golden] of Object.entries(BENCHMARK_GOLDEN)) {
  const [endpoints, services] = shape.split("/").map(Number);
  for (const mode of CACHE_MODES) {
    test(`EDS benchmark, ${endpoints} endpoints / ${services} services, ${mode.name}: bytes unchanged`, () => {
      const proxy = benchProxy("sidecar", { ip: "10.3.3.3", id: "random.default", labels: {} });
      const clusters = Array.from({ length: services }, (_, s) => `outbound|80||foo-${s}.com`);
      const { eds } = cacheModeDigests(shape, endpointsConfig(endpoints, services), mode, (push, registry, cache) => {
        const assignments = clusters.map((c) => buildLoadAssignment(push, proxy, registry, c, cache));
        assert.ok(
          assignments.every((a) => a.endpoints.length > 0),
          "every benchmark service has endpoints",
        );
        return { eds: assignments };
      });
      if (process.env.UPDATE_GOLDEN) console.log(`  "${shape}": "${eds}",`);
      assert.equal(eds, golden);
    });
  }
}

const HTTP_GOLDEN = "c5cc1b71ea3812135d0884c801be830f3c3a43c2c20d6395b88c236b3b2e1c03";

for (const mode of CACHE_MODES) {
  test(`http template (sidecar, 100 services, ${mode.name}): EDS of its EDS clusters unchanged`, () => {
    const proxy = benchProxy("sidecar");
    const objects = template("http").render({ services: 100, instances: 100 });
    const { eds } = cacheModeDigests("http", objects, mode, (push, registry, cache) => {
      const names = buildClusters(push, proxy, registry, cache)
        .filter((c) => c.clusterDiscoveryType.case === "type" && c.edsClusterConfig !== undefined)
        .map((c) => c.name);
      assert.ok(names.length > 0, "the http template has EDS clusters");
      const assignments = names.map((name) => buildLoadAssignment(push, proxy, registry, name, cache));
      assert.ok(
        assignments.some((a) => a.endpoints.length > 0),
        "some http template cluster has endpoints",
      );
      return { eds: assignments };
    });
    if (process.env.UPDATE_GOLDEN) console.log(`HTTP_GOLDEN = "${eds}"`);
    assert.equal(eds, HTTP_GOLDEN);
  });
}
