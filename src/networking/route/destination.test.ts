import assert from "node:assert/strict";
import { test } from "node:test";
import { routeAction, runGoldenCase, serviceFixture, vhostNamed } from "../../../test/support/route-cases.ts";
import { NO_MEMOS } from "../../util/memo.ts";
import { outboundClusterName, parseClusterName } from "../cluster/names.ts";
import { destinationCluster } from "./destination.ts";

function routesOf(vhost: string) {
  return vhostNamed(runGoldenCase("destination").get("9080"), vhost).routes;
}

test("destination golden: several destinations → weighted_clusters of outbound|port|subset|host, zero weights skipped", () => {
  const action = routeAction(routesOf("reviews.default.svc.cluster.local:9080")[0]);
  assert.equal(action.clusterSpecifier.case, "weightedClusters");
  const clusters = action.clusterSpecifier.case === "weightedClusters" ? action.clusterSpecifier.value.clusters : [];
  assert.deepEqual(
    clusters.map((c) => [c.name, c.weight]),
    [
      ["outbound|9080|v1|reviews.default.svc.cluster.local", 75],
      ["outbound|9080|v2|reviews.default.svc.cluster.local", 25],
    ],
  );
});

test("weighted destination headers go on the cluster weight; its :authority becomes that cluster's host rewrite", () => {
  const action = routeAction(routesOf("reviews.default.svc.cluster.local:9080")[0]);
  const v1 =
    action.clusterSpecifier.case === "weightedClusters" ? action.clusterSpecifier.value.clusters[0] : undefined;
  assert.deepEqual(
    v1?.requestHeadersToAdd.map((h) => h.header?.key),
    ["x-subset"],
  );
  assert.deepEqual(v1?.responseHeadersToRemove, ["x-internal"]);
  assert.deepEqual(v1?.hostRewriteSpecifier, { case: "hostRewriteLiteral", value: "v1.reviews" });
});

test("a weighted route's operation is <virtual service>:<port><path>", () => {
  assert.equal(routesOf("reviews.default.svc.cluster.local:9080")[0].decorator?.operation, "reviews:9080/split*");
});

test("no destination port, service not on the listener port: the listener port (Istio looks services up per port); single destination headers go on the route", () => {
  const r = routesOf("reviews.default.svc.cluster.local:9080")[1];
  assert.deepEqual(routeAction(r).clusterSpecifier, {
    case: "cluster",
    value: "outbound|9080||single.default.svc.cluster.local",
  });
  assert.deepEqual(
    r.requestHeadersToAdd.map((h) => h.header?.key),
    ["x-via"],
  );
  assert.deepEqual(r.requestHeadersToRemove, ["x-drop"]);
  assert.equal(r.decorator?.operation, "single.default.svc.cluster.local:9080/single*");
});

test("an ExternalName alias routes to its target host", () => {
  const r = routesOf("reviews.default.svc.cluster.local:9080")[2];
  assert.deepEqual(routeAction(r).clusterSpecifier, { case: "cluster", value: "outbound|9080||target.example.com" });
});

test("an explicit destination port wins over the listener port", () => {
  const r = routesOf("reviews.default.svc.cluster.local:9080")[3];
  assert.deepEqual(routeAction(r).clusterSpecifier, {
    case: "cluster",
    value: "outbound|8080||reviews.default.svc.cluster.local",
  });
});

test("no destination port: the service's only port, else (several ports) the listener port", () => {
  const single = serviceFixture({ hostname: "s.default.svc.cluster.local", ports: [{ port: 7000 }] });
  assert.equal(
    destinationCluster(NO_MEMOS, { host: single.hostname }, single, 9080),
    "outbound|7000||s.default.svc.cluster.local",
  );
  const svc = serviceFixture({ hostname: "m.default.svc.cluster.local", ports: [{ port: 1 }, { port: 2 }] });
  assert.equal(
    destinationCluster(NO_MEMOS, { host: svc.hostname }, svc, 9080),
    "outbound|9080||m.default.svc.cluster.local",
  );
  assert.equal(destinationCluster(NO_MEMOS, { host: "" }, undefined, 9080), "UnknownService");
  assert.deepEqual(parseClusterName(outboundClusterName(NO_MEMOS, 80, "v1", "a.b")), {
    direction: "outbound",
    port: 80,
    subset: "v1",
    hostname: "a.b",
  });
  assert.equal(parseClusterName("PassthroughCluster"), undefined);
});
