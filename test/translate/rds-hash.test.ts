// DestinationRule consistent hashing reaches the routes: the subset's policy over the rule's, the
// rule's for the default route, nothing for a host without consistent hashing.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { type admin, route, unpackAny } from "../../src/api/index.ts";
import { translate } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";

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
  assert.deepEqual(policy?.case === "cookie" ? [policy.value.name, policy.value.path, policy.value.ttl?.seconds] : [], [
    "session",
    "/",
    60n,
  ]);
  assert.deepEqual(hashes("web.shop.svc.cluster.local"), [[]]);
});
