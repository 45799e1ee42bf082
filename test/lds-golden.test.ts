// The LDS the micro benchmarks time (bench/templates-bench.ts, 100 services) stays the same bytes while
// listener generation is optimised: a SHA-256 over the response's encoded listeners, recorded from the
// code before the optimisation, and every listener within Envoy's constraints.
// After a deliberate change of the generated config, print the new digests with UPDATE_GOLDEN=1.
import assert from "node:assert/strict";
import { test } from "node:test";
import { benchProxy, template, templateState } from "../bench/templates.ts";
import { xdsCaches } from "../src/xds/generators/index.ts";
import { buildListeners } from "../src/xds/generators/lds.ts";
import { goldenDigest } from "./golden-digest.ts";

const SERVICES = 100;

const GOLDEN: Record<string, string> = {
  empty: "65bca6b50dd2366e6c98ed3fe7329779df7717a6ed746a67c58278fa3a7ccc79",
  http: "0abcd364db81e8df713ceed8777a3d4f56541b326d49598a529fbd0cbb3c28e5",
  tcp: "752114a00c731c4ad5f644f955b49b171bc9f6353571608877df1c09c76a61da",
  "telemetry-api": "af38b2ec46582d9747d9dfd257c602f4024862738cb19cd1449adc2898a44e60",
  gateways: "2a18f38de63f785a8ece31c371534f33a93f70c9ba815fa1f440999825a55a0f",
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
