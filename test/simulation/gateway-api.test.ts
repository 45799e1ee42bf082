// Gateway API routes reaching proxies: an HTTPRoute on a Gateway API Gateway, converted to Istio config,
// routes calls at the router whose pods the Gateway's Service selects (Istio's generated deployment labels
// them gateway.networking.k8s.io/gateway-name); a GAMMA route with a Service parent routes calls at a mesh
// sidecar. Both by header match and by a weighted split.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cluster, listener, route } from "../../src/api/index.ts";
import type { ProxySpec } from "../../src/cli/translate-state.ts";
import { violations } from "../support/pgv.ts";
import { generate, SIDECAR } from "./harness.ts";
import { type Call, type ProxyConfig, simulate } from "./simulate.ts";

const SERVICES = `
apiVersion: v1
kind: Service
metadata: {name: web-istio, namespace: infra}
spec: {clusterIP: 10.96.0.9, ports: [{name: http, port: 80}], selector: {gateway.networking.k8s.io/gateway-name: web}}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {clusterIP: 10.96.0.40, ports: [{name: http, port: 80}], selector: {app: api}}
---
apiVersion: v1
kind: Service
metadata: {name: api-v1, namespace: shop}
spec: {clusterIP: 10.96.0.41, ports: [{name: http, port: 80}], selector: {app: api, version: v1}}
---
apiVersion: v1
kind: Service
metadata: {name: api-v2, namespace: shop}
spec: {clusterIP: 10.96.0.42, ports: [{name: http, port: 80}], selector: {app: api, version: v2}}
`;

// Testers go to v2; everyone else is split 90/10.
const RULES = `
  - matches: [{path: {type: PathPrefix, value: /api}, headers: [{name: x-user, value: tester}]}]
    backendRefs: [{name: api-v2, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: api-v1, port: 80, weight: 90}, {name: api-v2, port: 80, weight: 10}]
`;

const INGRESS = `${SERVICES}---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: infra}
spec:
  gatewayClassName: istio
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: shop}
spec:
  parentRefs: [{name: web, namespace: infra}]
  hostnames: [shop.example.com]
  rules:${RULES}`;

const MESH = `${SERVICES}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api-split, namespace: shop}
spec:
  parentRefs: [{group: "", kind: Service, name: api, port: 80}]
  rules:${RULES}`;

/** A pod of the deployment Istio generates for Gateway `web`. */
const ROUTER: ProxySpec = {
  type: "router",
  ip: "10.0.0.9",
  namespace: "infra",
  labels: { "gateway.networking.k8s.io/gateway-name": "web" },
  id: "web-istio-5d8f.infra",
};
const CLIENT: ProxySpec = { ...SIDECAR, labels: { app: "client" }, id: "client.shop" };

const V1 = "outbound|80||api-v1.shop.svc.cluster.local";
const V2 = "outbound|80||api-v2.shop.svc.cluster.local";
const SPLIT = [
  { name: V1, weight: 90 },
  { name: V2, weight: 10 },
];

function assertValid(config: ProxyConfig): void {
  for (const l of config.listeners) assert.deepEqual(violations(listener.ListenerSchema, l), [], l.name);
  for (const r of config.routes) assert.deepEqual(violations(route.RouteConfigurationSchema, r), [], r.name);
  for (const c of config.clusters) assert.deepEqual(violations(cluster.ClusterSchema, c), [], c.name);
}

describe("an HTTPRoute on a Gateway API Gateway, at the Gateway's router", () => {
  const config = generate(INGRESS, ROUTER);
  const call: Call = {
    mode: "direct",
    protocol: "http",
    address: ROUTER.ip,
    port: 80,
    host: "shop.example.com",
    path: "/api/items",
  };

  test("the generated config is valid Envoy config", () => assertValid(config));

  test("a call is split 90/10 by the route's backend weights", () => {
    const result = simulate(config, call);
    assert.equal(result.error, undefined);
    assert.deepEqual(
      { listener: result.listener, routeConfig: result.routeConfig, virtualHost: result.virtualHost },
      { listener: "0.0.0.0_80", routeConfig: "http.80", virtualHost: "shop.example.com:80" },
    );
    assert.equal(result.route, "shop.shop.1");
    assert.deepEqual(result.weightedClusters, SPLIT);
  });

  test("the header match sends testers to v2; other paths and hosts match nothing", () => {
    const tester = simulate(config, { ...call, headers: { "x-user": "tester" } });
    assert.equal(tester.route, "shop.shop.0");
    assert.equal(tester.cluster, V2);
    assert.equal(simulate(config, { ...call, path: "/other" }).error, "no route matched");
    assert.equal(simulate(config, { ...call, host: "other.example.com" }).error, "no virtual host matched");
  });

  test("a router of another Gateway gets none of it", () => {
    const other = generate(INGRESS, { ...ROUTER, labels: { "gateway.networking.k8s.io/gateway-name": "other" } });
    assert.equal(simulate(other, call).error, "no listener matched");
  });
});

describe("a GAMMA HTTPRoute with a Service parent, at a mesh sidecar", () => {
  const config = generate(MESH, CLIENT);
  const call: Call = {
    mode: "outbound",
    protocol: "http",
    address: "10.96.0.40",
    port: 80,
    host: "api.shop.svc.cluster.local",
    path: "/api/items",
  };

  test("the generated config is valid Envoy config", () => assertValid(config));

  test("a call to the parent Service is split 90/10, by its short name too", () => {
    for (const host of ["api.shop.svc.cluster.local", "api"]) {
      const result = simulate(config, { ...call, host });
      assert.equal(result.error, undefined, host);
      assert.equal(result.routeConfig, "80");
      assert.equal(result.virtualHost, "api.shop.svc.cluster.local:80");
      assert.equal(result.route, "shop.api-split.1");
      assert.deepEqual(result.weightedClusters, SPLIT, host);
    }
  });

  test("the header match sends testers to v2", () => {
    const result = simulate(config, { ...call, headers: { "x-user": "tester" } });
    assert.equal(result.route, "shop.api-split.0");
    assert.equal(result.cluster, V2);
  });

  test("calls to other services are not touched by the route", () => {
    const result = simulate(config, { ...call, address: "10.96.0.41", host: "api-v1.shop.svc.cluster.local" });
    assert.equal(result.cluster, V1);
    assert.equal(result.route, "default");
  });
});
