// CDS through the generators: the bytes of the benchmark templates' CDS, each case pinning the RDS
// built in the same push beside it ("golden"). The clusters shared per proxy class and by the xDS
// cache are in cache.test.ts; unit tests of the builder, with its goldens, are in
// src/networking/cluster/.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { benchProxy, template } from "../../bench/templates.ts";
import { buildClusters, buildListeners, buildRouteConfiguration, routeNames } from "../../src/configgen/index.ts";
import type { NodeType } from "../../src/model/index.ts";
import { CACHE_MODES, cacheModeDigests } from "../support/cache-modes.ts";

describe("golden", () => {
  // The CDS and RDS the micro benchmarks time (bench/templates-bench.ts, 100 services) stay the same
  // bytes while generation is optimised: a SHA-256 over each response's encoded resources, recorded
  // from the code before the optimisation, and every resource within Envoy's constraints.
  // Each case runs with the xDS cache on and off (test/support/cache-modes.ts).
  // After a deliberate change of the generated config, print the new digests with UPDATE_GOLDEN=1.
  const SERVICES = 100;

  const GOLDEN: Record<string, { proxy: NodeType; cds: string; rds: string }> = {
    http: {
      proxy: "sidecar",
      cds: "ff198a63c4b00a26e82c7f308d3786f4089abe170923e28e9faec3e13a9b1824",
      rds: "5bb17f6082204e11cc57c2a444a63a60e81eded13dc195620c19601b02775b84",
    },
    virtualservice: {
      proxy: "sidecar",
      cds: "bbd8ed09493cabe569dc7bf1fbd91e1275a9f1edf86c0b8e89a05f6c2aca1d05",
      rds: "a5d61b30206e27eb6aa263940f605694b0e7867d4c7699e4d09b7255c1f5842b",
    },
    empty: {
      proxy: "sidecar",
      cds: "6c49c91b8dc32d4e46ca0a9cbb8999e076e755665578527a53b5ee88ba31fbf7",
      rds: "cd97504a73dc38ade145ce01a4516cb5a588901bcb05ac06597dd5ede8706a59",
    },
    gateways: {
      proxy: "router",
      cds: "ff0d5c8296291f43eb9afab6113b21bb82951e3239ad46e42f8bffa374b0c8ec",
      rds: "4312c497a80f3b25a2cea527d6f48d05750c8f6aa6110d2d41c2012d4a396f53",
    },
  };

  for (const [name, golden] of Object.entries(GOLDEN)) {
    for (const mode of CACHE_MODES) {
      test(`${name} (${golden.proxy}, ${SERVICES} services, ${mode.name}): CDS and RDS bytes unchanged`, () => {
        const proxy = benchProxy(golden.proxy);
        const objects = template(name).render({ services: SERVICES, instances: SERVICES });
        const { cds, rds } = cacheModeDigests(name, objects, mode, (push, endpoints, cache) => {
          const routes = routeNames(buildListeners(push, proxy, endpoints, cache));
          return {
            cds: [...buildClusters(push, proxy, endpoints, cache)],
            rds: routes.flatMap((r) => buildRouteConfiguration(push, proxy, r, cache) ?? []),
          };
        });
        if (process.env.UPDATE_GOLDEN)
          console.log(`${name}: { proxy: "${golden.proxy}", cds: "${cds}", rds: "${rds}" },`);
        assert.deepEqual({ cds, rds }, { cds: golden.cds, rds: golden.rds });
      });
    }
  }
});
