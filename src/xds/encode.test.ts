import assert from "node:assert/strict";
import { test } from "node:test";
import { create, fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { cluster, discovery } from "../api/index.ts";
import { encodeDeltaResponse, encodeResource, encodeSotwResponse } from "./encode.ts";
import { TypeUrl } from "./types.ts";

const c = (name: string) => create(cluster.ClusterSchema, { name });

test("a SotW response assembled from cached bytes decodes like the message it stands for", () => {
  const a = encodeResource({ name: "a", resource: c("a") });
  const bytes = encodeSotwResponse({ versionInfo: "v1", typeUrl: TypeUrl.Cluster, nonce: "n1", resources: [a] });
  const res = fromBinary(discovery.DiscoveryResponseSchema, bytes);
  assert.equal(res.versionInfo, "v1");
  assert.equal(res.nonce, "n1");
  assert.equal(res.typeUrl, TypeUrl.Cluster);
  assert.equal(res.resources[0].typeUrl, TypeUrl.Cluster);
  assert.equal(anyUnpack(res.resources[0], cluster.ClusterSchema)?.name, "a");
});

test("a delta response carries name, version and resource per entry, and removed names", () => {
  const a = encodeResource({ name: "a", resource: c("a"), version: "given" });
  const bytes = encodeDeltaResponse({
    systemVersionInfo: "v2",
    typeUrl: TypeUrl.Cluster,
    nonce: "n2",
    resources: [a],
    removed: ["gone"],
  });
  const res = fromBinary(discovery.DeltaDiscoveryResponseSchema, bytes);
  assert.equal(res.resources[0].name, "a");
  assert.equal(res.resources[0].version, "given");
  assert.equal(anyUnpack(res.resources[0].resource!, cluster.ClusterSchema)?.name, "a");
  assert.deepEqual(res.removedResources, ["gone"]);
});

test("a resource object is encoded once; equal content gets the same version hash", () => {
  const shared = c("a");
  const first = encodeResource({ name: "a", resource: shared });
  const again = encodeResource({ name: "a", resource: shared });
  assert.equal(first.any, again.any, "the same bytes object: not re-encoded");
  const copy = encodeResource({ name: "a", resource: c("a") });
  assert.notEqual(copy.any, first.any);
  assert.equal(copy.version, first.version);
  assert.notEqual(encodeResource({ name: "b", resource: c("b") }).version, first.version);
});
