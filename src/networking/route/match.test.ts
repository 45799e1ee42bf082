import assert from "node:assert/strict";
import { test } from "node:test";
import { runGoldenCase, vhostNamed } from "../../../test/support/route-cases.ts";
import { isCatchAllRoute, jwtClaimPath, translateRouteMatch } from "./match.ts";

function routes() {
  return vhostNamed(runGoldenCase("match").get("9080"), "reviews.default.svc.cluster.local:9080").routes;
}

test("match golden: route names are rule name + '.' + match name; matches for other ports, labels, namespaces, gateways are dropped", () => {
  assert.deepEqual(
    routes().map((r) => r.name),
    ["exact.login", "headers", "dropped", "catchall"],
  );
});

test("uri exact → path; method, authority and scheme → pseudo-header matchers after the sorted headers; statPrefix kept", () => {
  const m = routes()[0].match;
  assert.deepEqual(m?.pathSpecifier, { case: "path", value: "/login" });
  assert.equal(m?.caseSensitive, true);
  assert.deepEqual(
    m?.headers.map((h) => h.name),
    [":method", ":authority", ":scheme"],
  );
  assert.equal(routes()[0].statPrefix, "login");
});

test("headers sorted by name; regex '*' and empty matches become present_match; withoutHeaders invert (missing treated as empty unless present_match)", () => {
  const m = routes()[1].match;
  assert.deepEqual(m?.pathSpecifier, { case: "prefix", value: "/api" });
  assert.equal(m?.caseSensitive, false);
  const byName = new Map(m?.headers.map((h) => [h.name, h]));
  assert.deepEqual(
    m?.headers.map((h) => h.name),
    ["x-any", "x-canary", "x-debug", "x-trace", "x-user"],
  );
  assert.deepEqual(byName.get("x-any")?.headerMatchSpecifier, { case: "presentMatch", value: true });
  assert.deepEqual(byName.get("x-trace")?.headerMatchSpecifier, { case: "presentMatch", value: true });
  assert.equal(byName.get("x-debug")?.invertMatch, true);
  assert.equal(byName.get("x-debug")?.treatMissingHeaderAsEmpty, true);
  assert.equal(byName.get("x-canary")?.invertMatch, true);
  assert.equal(byName.get("x-canary")?.treatMissingHeaderAsEmpty, false);
});

test("@request.auth.claims headers match JWT payload metadata instead of headers", () => {
  const m = routes()[1].match;
  assert.equal(m?.dynamicMetadata.length, 1);
  assert.equal(m?.dynamicMetadata[0].filter, "envoy.filters.http.jwt_authn");
  assert.deepEqual(jwtClaimPath("@request.auth.claims[a][b]"), ["a", "b"]);
  assert.deepEqual(jwtClaimPath("@request.auth.claims.a.b"), ["a", "b"]);
  assert.equal(jwtClaimPath("@request.auth.claims"), undefined);
});

test("query parameters: regex string match, empty → present_match", () => {
  const q = routes()[1].match?.queryParameters ?? [];
  assert.deepEqual(
    q.map((p) => [p.name, p.queryParameterMatchSpecifier.case]),
    [
      ["debug", "presentMatch"],
      ["version", "stringMatch"],
    ],
  );
});

test("a catch-all match ends the route list (later matches and rules are not emitted)", () => {
  const r = routes();
  assert.ok(isCatchAllRoute(r[r.length - 1]));
  assert.equal(r[r.length - 1].name, "catchall");
});

test("Gateway API semantics: prefixes match whole path segments, trailing slash trimmed", () => {
  const m = translateRouteMatch({ uri: { prefix: "/foo/" } }, true);
  assert.deepEqual(m.pathSpecifier, { case: "pathSeparatedPrefix", value: "/foo" });
  assert.deepEqual(translateRouteMatch({ uri: { prefix: "/" } }, true).pathSpecifier, { case: "prefix", value: "/" });
});
