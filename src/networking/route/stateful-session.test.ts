// Persistent sessions (PILOT_ENABLE_PERSISTENT_SESSION_FILTER) on routes: the labelled service's virtual
// host, a route to it, and a gateway virtual host of its exact host carry a StatefulSessionPerRoute.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Any } from "@bufbuild/protobuf/wkt";
import { assertValid, proxyFixture, serviceFixture } from "../../../test/support/route-cases.ts";
import { cookieSessionState, headerSessionState, type route, statefulSession, unpackAny } from "../../api/index.ts";
import { DEFAULT_MESH_CONFIG } from "../../config/index.ts";
import type { Service } from "../../registry/index.ts";
import { STATEFUL_SESSION_FILTER } from "../httpfilter/index.ts";
import { buildSidecarRouteConfiguration } from "./config.ts";
import { buildGatewayRouteConfiguration } from "./gateway.ts";
import type { VirtualService } from "./types.ts";

const labelled = (hostname: string, labels: Record<string, string>): Service => ({
  ...serviceFixture({ hostname, ports: [{ port: 80 }], addresses: ["10.96.0.1"] }),
  labels,
});
const cookie = labelled("cart.default.svc.cluster.local", { "istio.io/persistent-session": "session-id:/cart" });
const header = labelled("auth.default.svc.cluster.local", { "istio.io/persistent-session-header": "x-session" });
const plain = labelled("web.default.svc.cluster.local", {});

/** The session state a virtual host or route configures: `cookie name path`, `header name`, or undefined. */
function session(config: { typedPerFilterConfig: Record<string, Any> }) {
  const any = config.typedPerFilterConfig[STATEFUL_SESSION_FILTER];
  const perRoute = any && unpackAny(any, statefulSession.StatefulSessionPerRouteSchema);
  if (perRoute?.override.case !== "statefulSession") return undefined;
  const state = perRoute.override.value.sessionState?.typedConfig;
  const c = state && unpackAny(state, cookieSessionState.CookieBasedSessionStateSchema);
  if (c) return `cookie ${c.cookie?.name} ${c.cookie?.path}`;
  const h = state && unpackAny(state, headerSessionState.HeaderBasedSessionStateSchema);
  return h ? `header ${h.name}` : undefined;
}

const vs = (name: string, routes: { host: string; weight?: number }[]): VirtualService => ({
  apiVersion: "networking.istio.io/v1",
  kind: "VirtualService",
  metadata: { name, namespace: "default" },
  spec: {
    hosts: [`${name}.example.com`],
    http: [{ route: routes.map(({ host, weight }) => ({ destination: { host }, ...(weight ? { weight } : {}) })) }],
  },
});

function sidecarRoutes(persistentSessions: boolean, virtualServices: VirtualService[] = []) {
  const config = buildSidecarRouteConfiguration({
    routeName: "80",
    proxy: proxyFixture(),
    mesh: DEFAULT_MESH_CONFIG,
    services: [cookie, header, plain],
    virtualServices,
    persistentSessions,
  });
  assert.ok(config);
  assertValid(config);
  const vhost = (name: string) => config.virtualHosts.find((v) => v.name === name) as route.VirtualHost;
  return { config, vhost };
}

test("a labelled service's virtual host carries its cookie (with path) or header session", () => {
  const { vhost } = sidecarRoutes(true);
  assert.equal(session(vhost("cart.default.svc.cluster.local:80")), "cookie session-id /cart");
  assert.equal(session(vhost("auth.default.svc.cluster.local:80")), "header x-session");
  assert.equal(session(vhost("web.default.svc.cluster.local:80")), undefined);
});

test("without PILOT_ENABLE_PERSISTENT_SESSION_FILTER nothing carries a session", () => {
  const { config } = sidecarRoutes(false, [vs("shop", [{ host: cookie.hostname }])]);
  assert.ok(
    config.virtualHosts.every((v) => session(v) === undefined && v.routes.every((r) => session(r) === undefined)),
  );
});

test("a route takes its destination's session; across weighted destinations the last one decides unless two have one", () => {
  const { vhost } = sidecarRoutes(true, [
    vs("one", [{ host: cookie.hostname }]),
    vs("firstwins", [
      { host: cookie.hostname, weight: 50 },
      { host: header.hostname, weight: 50 },
    ]),
    vs("lastdecides", [
      { host: cookie.hostname, weight: 50 },
      { host: plain.hostname, weight: 50 },
    ]),
  ]);
  assert.equal(session(vhost("one.example.com:80").routes[0]), "cookie session-id /cart");
  assert.equal(session(vhost("firstwins.example.com:80").routes[0]), "cookie session-id /cart");
  assert.equal(session(vhost("lastdecides.example.com:80").routes[0]), undefined);
});

test("a gateway virtual host of a labelled service's exact host carries its session", () => {
  const gatewayVs: VirtualService = {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "cart", namespace: "default" },
    spec: {
      hosts: [cookie.hostname],
      gateways: ["istio-system/gw"],
      http: [{ route: [{ destination: { host: plain.hostname } }] }],
    },
  };
  const config = buildGatewayRouteConfiguration({
    routeName: "http.80",
    proxy: proxyFixture({ type: "router", namespace: "istio-system" }),
    mesh: DEFAULT_MESH_CONFIG,
    servers: [
      {
        gatewayName: "istio-system/gw",
        server: { hosts: ["*"], port: { number: 80, name: "http", protocol: "HTTP" } },
      },
    ],
    virtualServicesForGateway: (gw) => (gw === "istio-system/gw" ? [gatewayVs] : []),
    lookupService: (h) => [cookie, header, plain].find((s) => s.hostname === h),
    persistentSessions: true,
  });
  assertValid(config);
  assert.equal(session(config.virtualHosts[0]), "cookie session-id /cart");
  assert.equal(session(config.virtualHosts[0].routes[0]), undefined);
});
