import assert from "node:assert/strict";
import { test } from "node:test";
import { makeService } from "../../test/support/cluster-fixtures.ts";
import { cfg, snapshot } from "../../test/support/model-fixtures.ts";

const names = (list: { metadata: { namespace?: string; name?: string } }[]) =>
  list.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
const reviews = { type: "sidecar" as const, configNamespace: "bookinfo", labels: { app: "reviews" } };

test("policies attach from the root namespace and the workload's namespace when the selector matches", () => {
  const snap = snapshot([
    cfg("AuthorizationPolicy", "bookinfo", "ns-wide", {}, { created: 2 }),
    cfg(
      "AuthorizationPolicy",
      "bookinfo",
      "reviews",
      { selector: { matchLabels: { app: "reviews" } } },
      { created: 1 },
    ),
    cfg("AuthorizationPolicy", "bookinfo", "ratings", { selector: { matchLabels: { app: "ratings" } } }),
    cfg("AuthorizationPolicy", "istio-system", "mesh", {}),
    cfg("AuthorizationPolicy", "other", "elsewhere", {}),
  ]);
  assert.deepEqual(names(snap.authorizationPoliciesFor(reviews)), [
    "istio-system/mesh",
    "bookinfo/reviews",
    "bookinfo/ns-wide",
  ]);
});

test("policies with targetRefs attach only to the Gateway API gateway they name, not to sidecars", () => {
  const snap = snapshot([
    cfg("RequestAuthentication", "apps", "jwt", {
      targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "web" }],
    }),
  ]);
  assert.deepEqual(snap.requestAuthenticationsFor({ configNamespace: "apps", labels: { app: "x" } }), []);
  const gateway = { configNamespace: "apps", labels: { "gateway.networking.k8s.io/gateway-name": "web" } };
  assert.deepEqual(names(snap.requestAuthenticationsFor(gateway)), ["apps/jwt"]);
});

test("a waypoint takes only targeted policies: its Gateway's, its service's (from the service's namespace), the waypoint class's", () => {
  const snap = snapshot([
    cfg("AuthorizationPolicy", "istio-system", "mesh-wide", {}),
    cfg("AuthorizationPolicy", "istio-system", "all-waypoints", {
      targetRefs: [{ group: "gateway.networking.k8s.io", kind: "GatewayClass", name: "istio-waypoint" }],
    }),
    cfg("AuthorizationPolicy", "shop", "selector", { selector: { matchLabels: { app: "x" } } }),
    cfg("AuthorizationPolicy", "shop", "gateway", {
      targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "waypoint" }],
    }),
    cfg("AuthorizationPolicy", "apps", "web", { targetRefs: [{ group: "", kind: "Service", name: "web" }] }),
    cfg("AuthorizationPolicy", "shop", "web-elsewhere", { targetRefs: [{ group: "", kind: "Service", name: "web" }] }),
    cfg("AuthorizationPolicy", "apps", "web-entry", {
      targetRefs: [{ group: "networking.istio.io", kind: "ServiceEntry", name: "web" }],
    }),
  ]);
  const waypoint = { configNamespace: "shop", labels: { "gateway.networking.k8s.io/gateway-name": "waypoint" } };
  assert.deepEqual(names(snap.waypointAuthorizationPolicies(waypoint)), ["istio-system/all-waypoints", "shop/gateway"]);
  const web = makeService({ hostname: "web.apps.svc.cluster.local", namespace: "apps", objectName: "web" });
  assert.deepEqual(names(snap.waypointAuthorizationPolicies(waypoint, web)), [
    "istio-system/all-waypoints",
    "shop/gateway",
    "apps/web",
  ]);
  // The same proxy as a gateway: selectors apply, neither the class nor services do.
  assert.deepEqual(names(snap.authorizationPoliciesFor(waypoint)), ["istio-system/mesh-wide", "shop/gateway"]);
});

test("a waypoint's EnvoyFilters are those naming it (its Gateway, the waypoint class), never by selector", () => {
  const snap = snapshot([
    cfg("EnvoyFilter", "istio-system", "mesh-wide", {}),
    cfg("EnvoyFilter", "istio-system", "all-waypoints", {
      targetRefs: [{ group: "gateway.networking.k8s.io", kind: "GatewayClass", name: "istio-waypoint" }],
    }),
    cfg("EnvoyFilter", "shop", "selector", {
      workloadSelector: { labels: { "gateway.networking.k8s.io/gateway-name": "waypoint" } },
    }),
    cfg("EnvoyFilter", "shop", "gateway", {
      targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "waypoint" }],
    }),
  ]);
  const labels = { "gateway.networking.k8s.io/gateway-name": "waypoint" };
  assert.deepEqual(names(snap.envoyFiltersFor({ type: "waypoint", configNamespace: "shop", labels })), [
    "istio-system/all-waypoints",
    "shop/gateway",
  ]);
  // The same labels on a gateway: the selector and the mesh-wide filter apply, the class does not.
  assert.deepEqual(names(snap.envoyFiltersFor({ type: "router", configNamespace: "shop", labels })), [
    "istio-system/mesh-wide",
    "shop/gateway",
    "shop/selector",
  ]);
});

test("Telemetry and TrafficExtensions (WasmPlugins translated) are listed per workload", () => {
  const snap = snapshot([
    cfg("Telemetry", "istio-system", "mesh-default", {}),
    cfg("Telemetry", "bookinfo", "reviews", { selector: { matchLabels: { app: "reviews" } } }),
    cfg("WasmPlugin", "bookinfo", "filter", { selector: { matchLabels: { app: "ratings" } } }),
  ]);
  assert.deepEqual(names(snap.telemetriesFor(reviews)), ["istio-system/mesh-default", "bookinfo/reviews"]);
  assert.deepEqual(snap.trafficExtensionsFor(reviews), []);
});

test("EnvoyFilters apply by priority, root namespace first on a tie, then oldest first", () => {
  const snap = snapshot([
    cfg("EnvoyFilter", "bookinfo", "late", { priority: 10 }),
    cfg("EnvoyFilter", "bookinfo", "local-old", {}, { created: 1 }),
    cfg("EnvoyFilter", "bookinfo", "local-new", {}, { created: 2 }),
    cfg("EnvoyFilter", "istio-system", "root", {}, { created: 3 }),
    cfg("EnvoyFilter", "istio-system", "early", { priority: -1 }, { created: 5 }),
    cfg("EnvoyFilter", "bookinfo", "other-app", { workloadSelector: { labels: { app: "ratings" } } }),
  ]);
  assert.deepEqual(names(snap.envoyFiltersFor(reviews)), [
    "istio-system/early",
    "istio-system/root",
    "bookinfo/local-old",
    "bookinfo/local-new",
    "bookinfo/late",
  ]);
});

test("TrafficExtensions come highest priority first, unset priority last; WasmPlugins as their translations", () => {
  const wasm = { url: "oci://example.com/filter:v1" };
  const snap = snapshot([
    cfg("WasmPlugin", "istio-system", "unset", wasm),
    cfg("WasmPlugin", "bookinfo", "low", { ...wasm, priority: -5 }),
    cfg("TrafficExtension", "bookinfo", "high", {
      priority: 10,
      lua: { inlineCode: "function envoy_on_request(h) end" },
    }),
    cfg("TrafficExtension", "bookinfo", "no-code", { priority: 20, lua: { inlineCode: "" } }),
  ]);
  assert.deepEqual(names(snap.trafficExtensionsFor(reviews)), [
    "bookinfo/high",
    "bookinfo/low~istio-translated-wasmplugin",
    "istio-system/unset~istio-translated-wasmplugin",
  ]);
});
