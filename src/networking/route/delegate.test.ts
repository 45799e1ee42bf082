import assert from "node:assert/strict";
import { test } from "node:test";
import { routeAction, runGoldenCase, vhostNamed } from "../../../test/support/route-cases.ts";

function routes() {
  return vhostNamed(runGoldenCase("delegate").get("80"), "bookinfo.default.svc.cluster.local:80").routes;
}

test("delegate golden: delegate rules replace the delegating rule; missing and unexported delegates drop only their rule", () => {
  assert.deepEqual(
    routes().map((r) => r.name),
    ["pages-v2", "pages", "rest"],
  );
});

test("merged match: the delegate's narrower uri, headers from both; the delegate's own settings win", () => {
  const v2 = routes()[0];
  assert.deepEqual(v2.match?.pathSpecifier, { case: "prefix", value: "/productpage/v2" });
  assert.deepEqual(
    v2.match?.headers.map((h) => h.name),
    ["x-env", "x-user"],
  );
  assert.equal(routeAction(v2).timeout?.seconds, 1n);
  assert.deepEqual(routeAction(v2).clusterSpecifier, {
    case: "cluster",
    value: "outbound|9080|v2|productpage.apps.svc.cluster.local",
  });
});

test("a delegate rule without match takes the root's match and settings (timeout) and the root's name", () => {
  const r = routes()[1];
  assert.deepEqual(r.match?.pathSpecifier, { case: "prefix", value: "/productpage" });
  assert.equal(routeAction(r).timeout?.seconds, 5n);
});

test("route metadata names the root VirtualService", () => {
  assert.equal(
    routes()[0].metadata?.filterMetadata.istio?.config,
    "/apis/networking.istio.io/v1/namespaces/default/virtual-service/root",
  );
});
