import assert from "node:assert/strict";
import { test } from "node:test";
import { clone, create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema, anyUnpack } from "@bufbuild/protobuf/wkt";
import { cluster, core, discovery } from "../api/index.ts";
import { outgoingBytes, UnwrittenResponse } from "../api/outgoing-response.ts";
import { MemoStore } from "../util/memo.ts";
import {
  type DeltaResponse,
  encodeDeltaResponse,
  encodeResource,
  encodeResources,
  encodeSotwResponse,
  KEEP_BODY_FROM,
  type SotwResponse,
  sotwNonce,
} from "./encode.ts";
import { TypeUrl } from "./types.ts";

const memos = new MemoStore();

const c = (name: string) => create(cluster.ClusterSchema, { name });

/** A response's bytes, copied out of the scratch buffer the next unwritten response overwrites. */
const sotwBytes = (r: SotwResponse) => new Uint8Array(outgoingBytes(encodeSotwResponse(memos, r)));
const deltaBytes = (r: DeltaResponse) => new Uint8Array(outgoingBytes(encodeDeltaResponse(memos, r)));

test("a SotW response assembled from cached bytes decodes like the message it stands for", () => {
  const a = encodeResource({ name: "a", resource: c("a") });
  const bytes = sotwBytes({ versionInfo: "v1", typeUrl: TypeUrl.Cluster, nonce: "n1", resources: [a] });
  const res = fromBinary(discovery.DiscoveryResponseSchema, bytes);
  assert.equal(res.versionInfo, "v1");
  assert.equal(res.nonce, "n1");
  assert.equal(res.typeUrl, TypeUrl.Cluster);
  assert.equal(res.resources[0].typeUrl, TypeUrl.Cluster);
  assert.equal(anyUnpack(res.resources[0], cluster.ClusterSchema)?.name, "a");
});

test("a delta response carries name, version and resource per entry, and removed names", () => {
  const a = encodeResource({ name: "a", resource: c("a"), version: "given" });
  const bytes = deltaBytes({
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

test("a delta entry with aliases carries them; others carry none", () => {
  const list = encodeResources(memos, [
    { name: "ns/svc", resource: c("svc"), aliases: ["net/10.96.0.1", "net/fd00::1"] },
    { name: "plain", resource: c("plain") },
  ]);
  const res = fromBinary(
    discovery.DeltaDiscoveryResponseSchema,
    deltaBytes({
      systemVersionInfo: "v",
      typeUrl: TypeUrl.Cluster,
      nonce: "n",
      resources: list.resources,
      removed: [],
    }),
  );
  assert.deepEqual(
    res.resources.map((r) => [r.name, r.aliases]),
    [
      ["ns/svc", ["net/10.96.0.1", "net/fd00::1"]],
      ["plain", []],
    ],
  );
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

/** Anys whose encodings need 1-, 2- and 3-byte length varints (< 128, > 128, > 16,384 bytes). */
function anys(): Any[] {
  return [0, 5, 200, 20_000].map((size, i) =>
    create(AnySchema, { typeUrl: `type.googleapis.com/test.T${i}`, value: new Uint8Array(size).fill(i + 1) }),
  );
}

const controlPlane = create(core.ControlPlaneSchema, { identifier: '{"Component":"istiod"}' });

test("SotW responses decode to the message they stand for, with empty lists and multi-byte lengths", () => {
  const resources = anys().map((any, i) => encodeResource({ name: `r${i}`, resource: any }));
  const cases = [
    { versionInfo: "v1", nonce: "n1", resources },
    { versionInfo: "", nonce: "", resources: [] },
    // A version over 128 bytes and a nonce of multi-byte characters: lengths count UTF-8 bytes.
    { versionInfo: "v".repeat(300), nonce: "nonce-é-✓", resources: resources.slice(3) },
  ];
  for (const c of cases) {
    const response = {
      ...c,
      typeUrl: TypeUrl.Cluster,
      controlPlane: toBinary(core.ControlPlaneSchema, controlPlane),
    };
    // The first responses are written when sent; the KEEP_BODY_FROM-th is written and kept.
    const bytes = sotwBytes(response);
    for (let k = 2; k <= KEEP_BODY_FROM + 1; k++) assert.deepEqual(sotwBytes(response), bytes);
    const expected = create(discovery.DiscoveryResponseSchema, {
      versionInfo: c.versionInfo,
      nonce: c.nonce,
      typeUrl: TypeUrl.Cluster,
      resources: c.resources.map((r) => fromBinary(AnySchema, r.any)),
      controlPlane,
    });
    // Decoded from a plain Uint8Array copy, so decoded bytes fields compare equal to the expected ones.
    assert.deepEqual(fromBinary(discovery.DiscoveryResponseSchema, new Uint8Array(bytes)), expected);
    // With every string set, the bytes are protobuf-es's own encoding of the message.
    if (c.versionInfo !== "") {
      assert.deepEqual(new Uint8Array(bytes), toBinary(discovery.DiscoveryResponseSchema, expected));
    }
  }
});

test("responses from one resource list share its encoded body and keep their own version and nonce", () => {
  const resources = anys().map((any, i) => encodeResource({ name: `r${i}`, resource: any }));
  // Sent to KEEP_BODY_FROM proxies at v1: the last response is written and kept, and v2's copies its body.
  for (let k = 1; k < KEEP_BODY_FROM; k++)
    sotwBytes({ versionInfo: "v1", typeUrl: TypeUrl.Cluster, nonce: "n1", resources });
  const first = sotwBytes({ versionInfo: "v1", typeUrl: TypeUrl.Cluster, nonce: "n1", resources });
  const second = sotwBytes({ versionInfo: "v2", typeUrl: TypeUrl.Cluster, nonce: "n22", resources });
  const decodedFirst = fromBinary(discovery.DiscoveryResponseSchema, first);
  const decodedSecond = fromBinary(discovery.DiscoveryResponseSchema, second);
  assert.deepEqual([decodedFirst.versionInfo, decodedFirst.nonce], ["v1", "n1"]);
  assert.deepEqual([decodedSecond.versionInfo, decodedSecond.nonce], ["v2", "n22"]);
  assert.deepEqual(decodedSecond.resources, decodedFirst.resources);
  assert.equal(decodedSecond.resources.length, 4);
});

test("delta responses decode to the message they stand for, with empty lists and multi-byte lengths", () => {
  const resources = anys().map((any, i) => encodeResource({ name: `r${i}-${"x".repeat(i * 100)}`, resource: any }));
  const cases = [
    { systemVersionInfo: "v1", nonce: "n1", resources, removed: ["gone", "é".repeat(100)] },
    { systemVersionInfo: "", nonce: "", resources: [], removed: [] },
    { systemVersionInfo: "v2", nonce: "n2", resources: resources.slice(2), removed: [] },
  ];
  for (const c of cases) {
    // The first responses write each resource, the KEEP_BODY_FROM-th keeps the body, the next copies it.
    for (let k = 1; k <= KEEP_BODY_FROM + 1; k++) {
      const nonce = k === 1 ? c.nonce : `${c.nonce}-${k}`;
      const bytes = deltaBytes({
        ...c,
        nonce,
        typeUrl: TypeUrl.Cluster,
        controlPlane: toBinary(core.ControlPlaneSchema, controlPlane),
      });
      const expected = create(discovery.DeltaDiscoveryResponseSchema, {
        systemVersionInfo: c.systemVersionInfo,
        nonce,
        typeUrl: TypeUrl.Cluster,
        resources: c.resources.map((r) => ({
          name: r.name,
          version: r.version,
          resource: fromBinary(AnySchema, r.any),
        })),
        removedResources: c.removed,
        controlPlane,
      });
      assert.deepEqual(fromBinary(discovery.DeltaDiscoveryResponseSchema, new Uint8Array(bytes)), expected);
      if (c.systemVersionInfo !== "") {
        assert.deepEqual(new Uint8Array(bytes), toBinary(discovery.DeltaDiscoveryResponseSchema, expected));
      }
    }
  }
});

test("a generated list is encoded once per array object, with one versions map", () => {
  const list = [
    { name: "a", resource: c("a") },
    { name: "b", resource: c("b"), version: "given" },
  ];
  const first = encodeResources(memos, list);
  assert.equal(encodeResources(memos, list), first, "the same array: the same encoding");
  assert.deepEqual(
    [...first.versions],
    [
      ["a", first.resources[0].version],
      ["b", "given"],
    ],
  );
  const copy = encodeResources(memos, [...list]);
  assert.notEqual(copy, first);
  assert.deepEqual(copy.versions, first.versions);
});

test("a resource that cannot be encoded is left out of its list's encoding and named in its errors", () => {
  const unencodable = create(cluster.ClusterSchema, { name: "bad", perConnectionBufferLimitBytes: 2 ** 32 });
  const list = [
    { name: "a", resource: c("a") },
    { name: "bad", resource: unencodable },
    { name: "b", resource: c("b") },
  ];
  const encoded = encodeResources(memos, list);
  assert.deepEqual(
    encoded.resources.map((r) => r.name),
    ["a", "b"],
  );
  assert.deepEqual([...encoded.versions.keys()], ["a", "b"]);
  assert.equal(encoded.errors.length, 1);
  assert.equal(encoded.errors[0].name, "bad");
  assert.match(encoded.errors[0].error, /invalid uint32: 4294967296/);
  assert.deepEqual(encodeResources(memos, [list[1]]).errors, encoded.errors, "in another list too");
  assert.throws(() => encodeResource(list[1]), /cannot encode bad: .*invalid uint32/);
});

test("proxies sent the same list in a push get one nonce and the very same response bytes", () => {
  const list = encodeResources(memos, [{ name: "a", resource: c("a") }]).resources;
  const other = encodeResources(memos, [{ name: "a", resource: c("a") }]).resources;
  const nonce = sotwNonce(memos, "push-1", list);
  assert.equal(sotwNonce(memos, "push-1", list), nonce);
  assert.notEqual(sotwNonce(memos, "push-1", other), nonce, "another list: another nonce");
  assert.notEqual(sotwNonce(memos, "push-2", list), nonce, "another push: another nonce");
  const response = (n: string) =>
    encodeSotwResponse(memos, { versionInfo: "push-1", typeUrl: TypeUrl.Cluster, nonce: n, resources: list });
  for (let k = 1; k < KEEP_BODY_FROM; k++) {
    assert.ok(response(nonce) instanceof UnwrittenResponse, `proxy ${k}'s response is written when sent`);
  }
  const first = response(nonce);
  assert.ok(first instanceof Uint8Array, "the list went to KEEP_BODY_FROM proxies: written and kept");
  assert.equal(response(nonce), first, "written once, shared");
  const later = outgoingBytes(response(sotwNonce(memos, "push-2", list)));
  assert.notEqual(later, first);
  const laterResponse = fromBinary(discovery.DiscoveryResponseSchema, later);
  assert.equal(laterResponse.nonce, sotwNonce(memos, "push-2", list));
  assert.deepEqual(laterResponse.resources, fromBinary(discovery.DiscoveryResponseSchema, first).resources);
  assert.equal(fromBinary(discovery.DiscoveryResponseSchema, first).nonce, nonce, "the first response is unchanged");
});

test("a resource is encoded once per object, and keeping its encoding leaves the object as it was", () => {
  const resource = c("a");
  const before = clone(cluster.ClusterSchema, resource);
  const keys = Object.keys(resource);
  const first = encodeResource({ name: "a", resource });
  assert.equal(encodeResource({ name: "a", resource }).any, first.any, "the same bytes, not encoded again");
  assert.deepStrictEqual(resource, before);
  assert.deepEqual(Object.keys(resource), keys);
  const copy = { ...resource, name: "b" };
  assert.equal(anyUnpack(encodeResourceAny(copy), cluster.ClusterSchema)?.name, "b", "a spread copy is encoded anew");

  // An object that cannot take the stamp is kept in the memos given.
  const frozen = Object.freeze(c("frozen"));
  const encoded = encodeResource({ name: "frozen", resource: frozen }, memos);
  assert.equal(encodeResource({ name: "frozen", resource: frozen }, memos).any, encoded.any);
});

function encodeResourceAny(resource: cluster.Cluster): Any {
  return fromBinary(AnySchema, encodeResource({ name: resource.name, resource }).any);
}
