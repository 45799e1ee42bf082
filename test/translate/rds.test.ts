// RDS through `sluice x translate`'s state and the generators, one file: DestinationRule consistent
// hashing in the routes ("consistent hash") and the virtual hosts a sidecar port's route names share
// ("port virtual hosts"). The bytes of the benchmark templates' RDS are pinned with their CDS in
// cds.test.ts ("golden"); unit tests of the builders, with their goldens, are in src/networking/route/.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { BENCH_MESH, benchProxy, DOMAIN_SUFFIX, template, templateState } from "../../bench/templates.ts";
import { type admin, route, unpackAny } from "../../src/api/index.ts";
import { translate } from "../../src/cli/translate-state.ts";
import { type ConfigObject, DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { buildRouteConfiguration, XdsCache } from "../../src/configgen/index.ts";
import type { MeshPush } from "../../src/model/index.ts";
import { storePush } from "../../src/model/store-push.ts";

describe("consistent hash", () => {
  // DestinationRule consistent hashing reaches the routes: the subset's policy over the rule's, the
  // rule's for the default route, nothing for a host without consistent hashing.
  const CONFIG = `
apiVersion: v1
kind: Service
metadata: {name: cart, namespace: shop}
spec: {clusterIP: 10.96.0.30, ports: [{name: http, port: 8080}], selector: {app: cart}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {clusterIP: 10.96.0.31, ports: [{name: http, port: 8080}], selector: {app: web}}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: cart, namespace: shop}
spec:
  host: cart.shop.svc.cluster.local
  trafficPolicy:
    loadBalancer: {consistentHash: {httpCookie: {name: session, ttl: 60s, path: /}}}
  subsets:
  - name: v2
    labels: {version: v2}
    trafficPolicy:
      loadBalancer: {consistentHash: {useSourceIp: true}}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: cart, namespace: shop}
spec:
  hosts: [cart.shop.svc.cluster.local]
  http:
  - match: [{headers: {canary: {exact: "1"}}}]
    route: [{destination: {host: cart.shop.svc.cluster.local, subset: v2}}]
  - route: [{destination: {host: cart.shop.svc.cluster.local}}]
`;

  const dir = mkdtempSync(join(tmpdir(), "sluice-hash-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("consistent-hash DestinationRules give routes their hash policy, subset first", () => {
    const file = join(dir, "config.yaml");
    writeFileSync(file, CONFIG);
    const result = translate(
      [file],
      { type: "sidecar", ip: "10.0.0.5", namespace: "shop", labels: { app: "web" }, id: "web.shop" },
      { mesh: DEFAULT_MESH_CONFIG, domainSuffix: "cluster.local", types: ["RDS"] },
    );
    assert.ok(result.dump, result.problems?.join("\n"));
    const routes = unpackAny(result.dump.configs[1]) as admin.RoutesConfigDump;
    const any = routes.dynamicRouteConfigs[0]?.routeConfig;
    assert.ok(any, "a route configuration");
    const config = unpackAny(any, route.RouteConfigurationSchema);
    const vhost = (host: string) => config?.virtualHosts.find((v) => v.domains.includes(host));
    const hashes = (host: string) =>
      vhost(host)?.routes.map((r) =>
        r.action.case === "route" ? r.action.value.hashPolicy.map((h) => h.policySpecifier.case) : [],
      );
    assert.deepEqual(hashes("cart.shop.svc.cluster.local"), [["connectionProperties"], ["cookie"]]);
    const cookie = vhost("cart.shop.svc.cluster.local")?.routes[1].action;
    const policy = cookie?.case === "route" ? cookie.value.hashPolicy[0].policySpecifier : undefined;
    assert.deepEqual(
      policy?.case === "cookie" ? [policy.value.name, policy.value.path, policy.value.ttl?.seconds] : [],
      ["session", "/", 60n],
    );
    assert.deepEqual(hashes("web.shop.svc.cluster.local"), [[]]);
  });
});

describe("port virtual hosts", () => {
  // The route names of one sidecar port (the port's, and each sniffed VIP listener's `<fqdn>:<port>`)
  // share the port's virtual hosts in a push instead of each building them all: each name still gets
  // what it got alone, and what building them reported is reported for every name that used them.
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
});
