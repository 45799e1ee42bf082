import assert from "node:assert/strict";
import { test } from "node:test";
import { proxyFixture, routeAction, runGoldenCase, vhostNamed } from "../../../test/support/route-cases.ts";
import { route } from "../../api/index.ts";
import { DEFAULT_MESH_CONFIG } from "../../config/index.ts";
import { buildGatewayRouteConfiguration } from "./gateway.ts";

test("gateway golden: virtual hosts per server host ∩ VS host, sorted, identical route lists collapsed", () => {
  const config = runGoldenCase("gateway").get("http.8080");
  assert.deepEqual(
    config?.virtualHosts.map((v) => [v.name, v.domains]),
    [
      ["*.example.com:80", ["*.example.com"]],
      ["secure.example.net:80", ["secure.example.net"]],
      ["shop.example.com:80", ["shop.example.com", "www.example.com"]],
    ],
  );
  assert.equal(config?.validateClusters, false);
  assert.equal(config?.ignorePortInHostMatching, true);
});

test("only the matches bound to this gateway become routes; the route port is the server port", () => {
  const vh = vhostNamed(runGoldenCase("gateway").get("http.8080"), "*.example.com:80");
  assert.deepEqual(
    vh.routes.map((r) => r.name),
    ["api"],
  );
  assert.deepEqual(routeAction(vh.routes[0]).clusterSpecifier, {
    case: "cluster",
    value: "outbound|8080||api.default.svc.cluster.local",
  });
  assert.equal(routeAction(vh.routes[0]).timeout?.seconds, 3n);
});

test("httpsRedirect servers get require_tls ALL, even without a VirtualService", () => {
  const vh = vhostNamed(runGoldenCase("gateway").get("http.8080"), "secure.example.net:80");
  assert.equal(vh.requireTls, route.VirtualHost_TlsRequirementType.ALL);
  assert.equal(vh.routes.length, 0);
});

test("no virtual host: blackhole:<port> answering 404 for any host", () => {
  const config = runGoldenCase("gateway-blackhole").get("https.443.https.secure.istio-system");
  assert.deepEqual(
    config?.virtualHosts.map((v) => [v.name, v.domains, v.routes.length]),
    [["blackhole:443", ["*"], 0]],
  );
});

test("catch-all routes of several VirtualServices on one host move last", () => {
  const base = { apiVersion: "networking.istio.io/v1", kind: "VirtualService" };
  const config = buildGatewayRouteConfiguration({
    routeName: "http.80",
    proxy: proxyFixture({ type: "router", namespace: "istio-system" }),
    mesh: DEFAULT_MESH_CONFIG,
    servers: [
      {
        gatewayName: "istio-system/gw",
        server: { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] },
      },
    ],
    virtualServicesForGateway: () => [
      {
        ...base,
        metadata: { name: "all", namespace: "a" },
        spec: { hosts: ["x.com"], http: [{ name: "all", route: [{ destination: { host: "s" } }] }] },
      },
      {
        ...base,
        metadata: { name: "api", namespace: "a" },
        spec: {
          hosts: ["x.com"],
          http: [{ name: "api", match: [{ uri: { prefix: "/api" } }], route: [{ destination: { host: "s" } }] }],
        },
      },
    ],
    lookupService: () => undefined,
  });
  assert.deepEqual(
    vhostNamed(config, "x.com:80").routes.map((r) => r.name),
    ["api", "all"],
  );
});

test("a gateway with no servers for the route gets an empty configuration", () => {
  const config = buildGatewayRouteConfiguration({
    routeName: "http.80",
    proxy: proxyFixture({ type: "router" }),
    mesh: DEFAULT_MESH_CONFIG,
    servers: [],
    virtualServicesForGateway: () => [],
    lookupService: () => undefined,
  });
  assert.deepEqual(config.virtualHosts, []);
  assert.equal(config.validateClusters, false);
});

test("HTTPS server: redirects default to https and drop 443; short names resolved; ./host binds only the gateway's namespace", () => {
  const config = runGoldenCase("gateway-https").get("https.443.https.secure.istio-system");
  assert.deepEqual(
    config?.virtualHosts.map((v) => v.name),
    ["secure.example.com:443"],
  );
  const [redirect, web] = vhostNamed(config, "secure.example.com:443").routes;
  assert.equal(redirect.action.case, "redirect");
  assert.equal((redirect.action.value as route.RedirectAction).portRedirect, 0);
  assert.deepEqual(routeAction(web).clusterSpecifier, {
    case: "cluster",
    value: "outbound|8080||web.istio-system.svc.cluster.local",
  });
});

test("a gateway's route configurations share the routes that never read the server's port or TLS setting", () => {
  const base = { apiVersion: "networking.istio.io/v1", kind: "VirtualService" };
  const virtualServices = [
    {
      ...base,
      metadata: { name: "ported", namespace: "a" },
      spec: {
        hosts: ["x.com"],
        http: [{ name: "x", route: [{ destination: { host: "s", port: { number: 9000 } } }] }],
      },
    },
    {
      ...base,
      // No destination port and no service: the cluster is on the listener port.
      metadata: { name: "unported", namespace: "a" },
      spec: { hosts: ["y.com"], http: [{ name: "y", route: [{ destination: { host: "t" } }] }] },
    },
  ];
  const routesMemo = new WeakMap();
  const config = (routeName: string, port: number, tls: boolean) =>
    buildGatewayRouteConfiguration({
      routeName,
      proxy: proxyFixture({ type: "router", namespace: "istio-system" }),
      mesh: DEFAULT_MESH_CONFIG,
      servers: [
        {
          gatewayName: "istio-system/gw",
          server: {
            port: { number: port, name: `p${port}`, protocol: tls ? "HTTPS" : "HTTP" },
            hosts: ["*"],
            ...(tls ? { tls: { mode: "SIMPLE" as const, credentialName: "c" } } : {}),
          },
        },
      ],
      virtualServicesForGateway: () => virtualServices,
      lookupService: () => undefined,
      routesMemo,
    });
  const http = config("http.80", 80, false);
  const https = config("https.443.p443.gw.istio-system", 443, true);
  assert.equal(vhostNamed(https, "x.com:443").routes[0], vhostNamed(http, "x.com:80").routes[0]);
  const [plain, secure] = [vhostNamed(http, "y.com:80"), vhostNamed(https, "y.com:443")].map((v) => v.routes[0]);
  assert.notEqual(secure, plain);
  assert.deepEqual(
    [plain, secure].map((r) => routeAction(r).clusterSpecifier.value),
    ["outbound|80||t", "outbound|443||t"],
  );
  // The same port and TLS setting again: the port-reading routes are shared too.
  assert.equal(vhostNamed(config("http.80", 80, false), "y.com:80").routes[0], plain);
});
