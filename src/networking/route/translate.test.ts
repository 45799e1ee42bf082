import assert from "node:assert/strict";
import { test } from "node:test";
import { proxyFixture, routeAction } from "../../../test/support/route-cases.ts";
import { DEFAULT_MESH_CONFIG } from "../../config/index.ts";
import { NO_MEMOS } from "../../util/memo.ts";
import { buildVirtualServiceRoutes, configMetadata, translateRoute } from "./translate.ts";
import { MESH_GATEWAY, type RouteContext, type VirtualService } from "./types.ts";

const ctx: RouteContext = {
  proxy: proxyFixture({ namespace: "shop", labels: { app: "cart" } }),
  mesh: DEFAULT_MESH_CONFIG,
  memos: NO_MEMOS,
  listenerPort: 80,
  gatewayNames: new Set([MESH_GATEWAY]),
  isTls: false,
  lookupService: () => undefined,
};

function vs(http: NonNullable<VirtualService["spec"]>["http"]): VirtualService {
  return {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "v", namespace: "shop" },
    spec: { hosts: ["h"], http },
  };
}

test("a redirect code Envoy cannot send drops the route instead of sending one without an action", () => {
  const v = vs([{ redirect: { uri: "/x", redirectCode: 305 } }]);
  assert.equal(translateRoute(v.spec?.http?.[0] ?? {}, undefined, v, ctx), undefined);
});

test("sourceNamespace and sourceLabels select the proxy; no applicable rule means no routes", () => {
  const v = vs([
    { name: "other-ns", match: [{ sourceNamespace: "prod" }], route: [{ destination: { host: "a" } }] },
    {
      name: "labels",
      match: [{ sourceLabels: { app: "cart" }, sourceNamespace: "shop" }],
      route: [{ destination: { host: "a" } }],
    },
  ]);
  assert.deepEqual(
    buildVirtualServiceRoutes(v, ctx).map((r) => r.name),
    ["labels"],
  );
  assert.deepEqual(
    buildVirtualServiceRoutes(vs([{ match: [{ port: 8080 }], route: [{ destination: { host: "a" } }] }]), ctx),
    [],
  );
});

test("a rule without match is a catch-all: later rules are not emitted", () => {
  const v = vs([
    { name: "all", route: [{ destination: { host: "a" } }] },
    { name: "never", match: [{ uri: { prefix: "/x" } }], route: [{ destination: { host: "a" } }] },
  ]);
  assert.deepEqual(
    buildVirtualServiceRoutes(v, ctx).map((r) => r.name),
    ["all"],
  );
});

test("a fault with nothing Envoy supports adds no per-filter config; CORS always does", () => {
  const v = vs([
    {
      fault: { abort: { http2Error: "x" } },
      corsPolicy: { allowMethods: ["GET"] },
      route: [{ destination: { host: "a" } }],
    },
  ]);
  const r = buildVirtualServiceRoutes(v, ctx)[0];
  assert.deepEqual(Object.keys(r.typedPerFilterConfig), ["envoy.filters.http.cors"]);
});

test("route metadata names the VirtualService as /apis/networking.istio.io/v1/namespaces/<ns>/virtual-service/<name>", () => {
  assert.deepEqual(configMetadata(NO_MEMOS, vs([])).filterMetadata, {
    istio: { config: "/apis/networking.istio.io/v1/namespaces/shop/virtual-service/v" },
  });
});

test("the routes of one rule's matches share its forward action; a destination's headers go on each route", () => {
  const v = vs([
    {
      match: [{ uri: { prefix: "/a" } }, { uri: { regex: "/b" } }],
      rewrite: { uri: "/new" },
      route: [{ destination: { host: "a" }, headers: { request: { set: { x: "1" } } } }],
    },
  ]);
  const [a, b] = buildVirtualServiceRoutes(v, ctx);
  assert.equal(a.action.value, b.action.value);
  assert.deepEqual(
    [a, b].map((r) => r.requestHeadersToAdd.map((h) => h.header?.key)),
    [["x"], ["x"]],
  );
});

test("a Gateway API prefix rewrite to / keeps one action per path-separated prefix matched", () => {
  const v = vs([
    {
      match: [{ uri: { prefix: "/a" } }, { uri: { prefix: "/b" } }],
      rewrite: { uri: "/" },
      route: [{ destination: { host: "a" } }],
    },
  ]);
  v.metadata.annotations = { "internal.istio.io/route-semantics": "gateway" };
  const actions = buildVirtualServiceRoutes(v, ctx).map(routeAction);
  assert.notEqual(actions[0], actions[1]);
  assert.deepEqual(
    actions.map((a) => a.regexRewrite?.pattern?.regex),
    ["^/a(/?)(.*)", "^/b(/?)(.*)"],
  );
});
