// The route names of one sidecar port (the port's, and each sniffed VIP listener's `<fqdn>:<port>`)
// share the port's virtual hosts in a push instead of each building them all: each name still gets
// what it got alone, and what building them reported is reported for every name that used them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { BENCH_MESH, benchProxy, DOMAIN_SUFFIX, template, templateState } from "../../bench/templates.ts";
import type { ConfigObject } from "../../src/config/index.ts";
import { buildRouteConfiguration, XdsCache } from "../../src/configgen/index.ts";
import type { MeshPush } from "../../src/model/index.ts";
import { storePush } from "../../src/model/store-push.ts";

/** The xDS cache these tests build with, as the discovery server's generators share one. */
const cache = new XdsCache();

// Istio's `empty` benchmark template: services random-<i>.host.example at 127.0.0.<i>, port 9090 undeclared
// (sniffed), and a ServiceEntry whose address is random-0's, so port 9090 has a duplicate domain.
const duplicateAddress: ConfigObject = {
  apiVersion: "networking.istio.io/v1",
  kind: "ServiceEntry",
  metadata: { name: "duplicate", namespace: "default" },
  spec: {
    hosts: ["duplicate.example"],
    addresses: ["127.0.0.0"],
    ports: [{ number: 9090, name: "auto" }],
    resolution: "STATIC",
    location: "MESH_INTERNAL",
    endpoints: [{ address: "1.2.3.5" }],
  },
};

function setup() {
  cache.clear();
  const state = templateState([...template("empty").render({ services: 3, instances: 0 }), duplicateAddress]);
  const proxy = benchProxy("sidecar");
  const routes = (push: MeshPush, name: string) => {
    const config = buildRouteConfiguration(push, proxy, name, cache);
    assert.ok(config, name);
    return config.virtualHosts.map((vh) => ({ name: vh.name, domains: vh.domains }));
  };
  const next = (previous: MeshPush) => storePush(state.store, state.registry, BENCH_MESH, DOMAIN_SUFFIX, previous);
  return { push: state.push, routes, next };
}

test("each sniffed route name gets its service's virtual host for any Host; the port's keeps its domains", () => {
  const { push, routes } = setup();
  for (const i of [0, 1, 2]) {
    assert.deepEqual(routes(push, `random-${i}.host.example:9090`), [
      { name: `random-${i}.host.example:9090`, domains: ["*"] },
    ]);
  }
  const port = routes(push, "9090");
  assert.deepEqual(port.find((vh) => vh.name === "random-1.host.example:9090")?.domains, [
    "random-1.host.example",
    "random-1.host.example.",
    "127.0.0.1",
  ]);
  assert.equal(port.at(-1)?.name, "allow_any");
});

test("a route name using the port's virtual hosts built for another reports their duplicate domains", () => {
  const { push, routes, next } = setup();
  routes(push, "random-1.host.example:9090");
  routes(push, "random-2.host.example:9090");
  assert.equal(push.status.count("pilot_vservice_dup_domain"), 1);
  // The next push reuses random-2's configuration, and reports what building it reported.
  const later = next(push);
  routes(later, "random-2.host.example:9090");
  assert.equal(later.status.count("pilot_vservice_dup_domain"), 1);
});
