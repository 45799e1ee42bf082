// The LDS the micro benchmarks time (bench/templates-bench.ts, 100 services) stays the same bytes while
// listener generation is optimised: a SHA-256 over the response's encoded listeners, recorded from the
// code before the optimisation, and every listener within Envoy's constraints.
// Each case runs with the xDS cache on and off (test/support/cache-modes.ts).
// After a deliberate change of the generated config, print the new digests with UPDATE_GOLDEN=1.
import assert from "node:assert/strict";
import { test } from "node:test";
import { benchProxy, template } from "../bench/templates.ts";
import { buildListeners } from "../src/configgen/index.ts";
import { CACHE_MODES, cacheModeDigests } from "./support/cache-modes.ts";

const SERVICES = 100;

const GOLDEN: Record<string, string> = {
  empty: "87573ec3d899c8ad6e22d37e1a41334b3c6d0df93dd55673318adafb14e5dd82",
  http: "dd0912cffc4c75cdf527003d3cf3d0e751918a7fc9accee68fe395573fb1df7c",
  tcp: "e483c570c9e1ea93a3227fc0ec0991aa86cc448328c9c81f8660cd7a6f55cafc",
  "telemetry-api": "833f9b7ce7d27fafb2e1808daeb8e88a2e2b47eeee039456761559179a23e4e2",
  gateways: "9154e516643945f376cb0f8b92fab969d601750214e1c9124dc6e3c7f2416ec7",
};

for (const [name, golden] of Object.entries(GOLDEN)) {
  const t = template(name);
  for (const mode of CACHE_MODES) {
    test(`${name} (${t.proxy}, ${SERVICES} services, ${mode.name}): LDS bytes unchanged`, () => {
      const proxy = benchProxy(t.proxy);
      const objects = t.render({ services: SERVICES, instances: SERVICES });
      const { lds } = cacheModeDigests(name, objects, mode, (push, endpoints, cache) => ({
        lds: buildListeners(push, proxy, endpoints, cache),
      }));
      if (process.env.UPDATE_GOLDEN) console.log(`  "${name}": "${lds}",`);
      assert.equal(lds, golden);
    });
  }
}
