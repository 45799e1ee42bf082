import assert from "node:assert/strict";
import { test } from "node:test";
import { routeAction, runGoldenCase, vhostNamed } from "../../../test/support/route-cases.ts";
import { route } from "../../api/index.ts";

function routes(vhost: string) {
  return vhostNamed(runGoldenCase("rewrite").get("80"), vhost).routes;
}

test("rewrite golden: uri → prefix_rewrite; rewrite.authority beats a headers :authority", () => {
  const action = routeAction(routes("web.default.svc.cluster.local:80")[0]);
  assert.equal(action.prefixRewrite, "/new");
  assert.deepEqual(action.hostRewriteSpecifier, { case: "hostRewriteLiteral", value: "backend.example.com" });
});

test("uriRegexRewrite → regex_rewrite, and wins over uri", () => {
  const action = routeAction(routes("web.default.svc.cluster.local:80")[1]);
  assert.equal(action.prefixRewrite, "");
  assert.equal(action.regexRewrite?.pattern?.regex, "^/service/([^/]+)(/.*)$");
  assert.equal(action.regexRewrite?.substitution, "\\2/instance/\\1");
});

test("Gateway API routes: path-separated prefix, prefix removal to '/', 500 for a missing backend", () => {
  const r = routes("app.default.svc.cluster.local:80")[0];
  assert.deepEqual(r.match?.pathSpecifier, { case: "pathSeparatedPrefix", value: "/app" });
  const action = routeAction(r);
  assert.equal(action.regexRewrite?.pattern?.regex, "^/app(/?)(.*)");
  assert.equal(action.regexRewrite?.substitution, "/\\2");
  assert.equal(action.clusterNotFoundResponseCode, route.RouteAction_ClusterNotFoundResponseCode.INTERNAL_SERVER_ERROR);
});
