import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_MESH_CONFIG } from "../../config/index.ts";
import { matchConflict, mergeDelegates, mergeHttpRoute } from "./delegate.ts";
import { routeAction, runGoldenCase, vhostNamed } from "./test-helpers.ts";
import type { VirtualService } from "./types.ts";

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

test("match conflicts as Istio: exact vs prefix, prefix outside root prefix, regex vs anything, different ports", () => {
  assert.equal(matchConflict({ uri: { exact: "/a" } }, { uri: { prefix: "/a" } }), true);
  assert.equal(matchConflict({ uri: { prefix: "/a/b" } }, { uri: { prefix: "/a" } }), true);
  assert.equal(matchConflict({ uri: { prefix: "/a" } }, { uri: { exact: "/a/c" } }), false);
  assert.equal(matchConflict({ uri: { regex: ".*" } }, { uri: { prefix: "/a" } }), true);
  assert.equal(matchConflict({ port: 80 }, { port: 81 }), true);
  assert.equal(matchConflict({ gateways: ["a"] }, { gateways: ["a", "b"] }), true);
  assert.equal(mergeHttpRoute({ match: [{ uri: { exact: "/x" } }] }, { match: [{ uri: { exact: "/y" } }] }), undefined);
});

test("merging leaves the inputs unchanged", () => {
  const root: VirtualService = {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "r", namespace: "ns" },
    spec: { hosts: ["h"], http: [{ name: "a", delegate: { name: "d" } }] },
  };
  const delegate: VirtualService = {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata: { name: "d", namespace: "ns" },
    spec: { http: [{ name: "b", route: [{ destination: { host: "x" } }] }] },
  };
  const before = JSON.stringify([root, delegate]);
  const merged = mergeDelegates(root, () => delegate, DEFAULT_MESH_CONFIG);
  assert.equal(merged.spec?.http?.[0]?.name, "a-b");
  assert.equal(merged.spec?.http?.[0]?.delegate, undefined);
  assert.equal(JSON.stringify([root, delegate]), before);
});
