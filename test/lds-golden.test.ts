// The LDS the micro benchmarks time (bench/templates-bench.ts, 100 services) stays the same bytes while
// listener generation is optimised: a SHA-256 over the response's encoded listeners, recorded from the
// code before the optimisation, and every listener within Envoy's constraints.
// After a deliberate change of the generated config, print the new digests with UPDATE_GOLDEN=1.
import assert from "node:assert/strict";
import { test } from "node:test";
import { benchProxy, template, templateState } from "../bench/templates.ts";
import { xdsCaches } from "../src/xds/generators/index.ts";
import { buildListeners } from "../src/xds/generators/lds.ts";
import { goldenDigest } from "./support/golden-digest.ts";

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
  test(`${name} (${t.proxy}, ${SERVICES} services): LDS bytes unchanged`, () => {
    xdsCaches.clear();
    const state = templateState(t.render({ services: SERVICES, instances: SERVICES }));
    const listeners = buildListeners(state.push, benchProxy(t.proxy), state.registry);
    assert.ok(listeners.length > 0, `${name}: no listeners`);
    const digest = goldenDigest(listeners, name);
    if (process.env.UPDATE_GOLDEN) console.log(`  "${name}": "${digest}",`);
    assert.equal(digest, golden);
  });
}
