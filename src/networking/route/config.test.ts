import assert from "node:assert/strict";
import { test } from "node:test";
import { proxyFixture, routeAction, runGoldenCase, vhostNamed } from "../../../test/support/route-cases.ts";
import { DEFAULT_MESH_CONFIG } from "../../config/index.ts";
import { buildSidecarRouteConfiguration, parseSidecarRouteName } from "./config.ts";

test("conflict golden: the first VirtualService for a host wins its virtual host; later ones are dropped", () => {
  const config = runGoldenCase("conflict").get("80");
  const vh = vhostNamed(config, "reviews.default.svc.cluster.local:80");
  assert.deepEqual(
    vh.routes.map((r) => r.name),
    ["older"],
  );
  assert.equal(config?.virtualHosts.filter((v) => v.name.startsWith("reviews.")).length, 1);
});

test("a wildcard VirtualService claims the services no more specific VirtualService host names", () => {
  const config = runGoldenCase("conflict").get("80");
  assert.deepEqual(
    vhostNamed(config, "a.example.com:80").routes.map((r) => r.name),
    ["wildcard"],
  );
  assert.deepEqual(
    vhostNamed(config, "b.example.com:80").routes.map((r) => r.name),
    ["exact-b"],
  );
});

test("a VirtualService host outside the registry gets a virtual host on port 80 with just that domain", () => {
  const vh = vhostNamed(runGoldenCase("conflict").get("80"), "www.google.com:80");
  assert.deepEqual(vh.domains, ["www.google.com"]);
  assert.deepEqual(routeAction(vh.routes[0]).clusterSpecifier, {
    case: "cluster",
    value: "outbound|80||www.google.com",
  });
});

test("a VirtualService whose matches are all for gateways gives the sidecar no virtual host", () => {
  const names =
    runGoldenCase("conflict")
      .get("80")
      ?.virtualHosts.map((v) => v.name) ?? [];
  assert.ok(!names.includes("c.example.org:80"));
});

test("REGISTRY_ONLY ends the route configuration with block_all", () => {
  const vhosts = runGoldenCase("conflict").get("80")?.virtualHosts ?? [];
  assert.equal(vhosts[vhosts.length - 1].name, "block_all");
});

test("sniffed <fqdn>:<port> route: only that service's virtual host, domains '*', no catch-all", () => {
  const config = runGoldenCase("sniffed").get("reviews.default.svc.cluster.local:9080");
  assert.deepEqual(
    config?.virtualHosts.map((v) => [v.name, v.domains]),
    [["reviews.default.svc.cluster.local:9080", ["*"]]],
  );
});

test("http_proxy route: port-80 hosts keep every domain, other ports only host:port domains", () => {
  const config = runGoldenCase("sniffed").get("http_proxy");
  assert.ok(vhostNamed(config, "web.default.svc.cluster.local:80").domains.includes("web"));
  assert.ok(vhostNamed(config, "web.default.svc.cluster.local:80").domains.includes("web:80"));
  const ratings = vhostNamed(config, "ratings.default.svc.cluster.local:9080").domains;
  assert.ok(ratings.length > 0 && ratings.every((d) => d.includes(":")));
  assert.equal(config?.virtualHosts[config.virtualHosts.length - 1].name, "allow_any");
});

test("route names: ports, sniffed host:port, http_proxy; anything else is not a sidecar route", () => {
  assert.deepEqual(parseSidecarRouteName("8080"), { listenerPort: 8080, sniffed: false });
  assert.deepEqual(parseSidecarRouteName("a.b:9080"), { listenerPort: 9080, sniffed: true });
  assert.deepEqual(parseSidecarRouteName("http_proxy"), { listenerPort: 0, sniffed: false });
  assert.equal(parseSidecarRouteName("http.8080"), undefined);
  const none = buildSidecarRouteConfiguration({
    routeName: "bogus",
    proxy: proxyFixture(),
    mesh: DEFAULT_MESH_CONFIG,
    services: [],
    virtualServices: [],
  });
  assert.equal(none, undefined);
});

test("a port with no HTTP service still has the catch-all", () => {
  const config = buildSidecarRouteConfiguration({
    routeName: "7070",
    proxy: proxyFixture(),
    mesh: DEFAULT_MESH_CONFIG,
    services: [],
    virtualServices: [],
  });
  assert.deepEqual(
    config?.virtualHosts.map((v) => v.name),
    ["allow_any"],
  );
});
