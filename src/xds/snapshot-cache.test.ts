import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { cluster } from "../api/index.ts";
import type { WatchedResource } from "./generator.ts";
import { SnapshotCache } from "./snapshot-cache.ts";
import { TypeUrl } from "./types.ts";

const proxy = (nodeId: string) => ({ nodeId }) as Parameters<SnapshotCache["generate"]>[0];
const wildcard = (typeUrl: string): WatchedResource => ({ typeUrl, resourceNames: new Set(), wildcard: true });
const named = (typeUrl: string, ...names: string[]): WatchedResource => ({
  typeUrl,
  resourceNames: new Set(names),
  wildcard: false,
});
const served = (cache: SnapshotCache, nodeId: string, watched: WatchedResource) =>
  cache.generate(proxy(nodeId), watched).resources.map((r) => r.name);

test("messages and Envoy JSON are served by type URL and name, a node's own set replacing the shared one", () => {
  const cache = new SnapshotCache();
  cache.set([
    create(cluster.ClusterSchema, { name: "a" }),
    { "@type": TypeUrl.Cluster, name: "b", connect_timeout: "1s" },
    { "@type": TypeUrl.Endpoint, clusterName: "a" },
  ]);
  cache.set([{ "@type": TypeUrl.Cluster, name: "c" }], "special");
  assert.deepEqual(served(cache, "any", wildcard(TypeUrl.Cluster)), ["a", "b"]);
  assert.deepEqual(served(cache, "any", named(TypeUrl.Endpoint, "a", "missing")), ["a"]);
  assert.deepEqual(served(cache, "special", wildcard(TypeUrl.Cluster)), ["c"]);
  assert.deepEqual(served(cache, "special", named(TypeUrl.Endpoint, "a")), []);
  const b = cache.resources(proxy("any"), TypeUrl.Cluster).get("b")?.resource as cluster.Cluster;
  assert.equal(b.connectTimeout?.seconds, 1n, "the JSON form is read as Envoy reads it");
  cache.forget("special");
  assert.deepEqual(served(cache, "special", wildcard(TypeUrl.Cluster)), ["a", "b"]);
});

test("a bad resource names its index and why, and the last good set keeps serving", () => {
  const cache = new SnapshotCache();
  cache.set([{ "@type": TypeUrl.Cluster, name: "good" }]);
  const cases: [unknown[], RegExp][] = [
    [
      [{ "@type": "type.googleapis.com/no.such.Type", name: "x" }],
      /^resources\[0\]: @type "type.googleapis.com\/no.such.Type" is not a type Sluice knows$/,
    ],
    [
      [{ "@type": TypeUrl.Cluster, name: "x", lb_policy: "NOPE" }],
      /^resources\[0\]: envoy.config.cluster.v3.Cluster x: cannot decode enum .*LbPolicy from JSON: "NOPE"$/,
    ],
    [[{ "@type": TypeUrl.Cluster }], /^resources\[0\]: a envoy.config.cluster.v3.Cluster resource needs a name$/],
    [
      [
        { "@type": TypeUrl.Cluster, name: "x" },
        { "@type": TypeUrl.Cluster, name: "x" },
      ],
      /^resources\[1\]: a second envoy.config.cluster.v3.Cluster named x$/,
    ],
  ];
  for (const [resources, message] of cases) {
    assert.throws(() => cache.set(resources as Parameters<SnapshotCache["set"]>[0]), { message });
  }
  assert.deepEqual(served(cache, "any", wildcard(TypeUrl.Cluster)), ["good"]);
});
