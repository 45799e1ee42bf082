import assert from "node:assert/strict";
import { test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { discovery } from "../../api/index.ts";
import { TypeUrl } from "../types.ts";
import { DiscoveryRequestDecoder } from "./request-names.ts";

const clusters = (n: number, host = "svc") =>
  Array.from({ length: n }, (_, i) => `outbound|9080||${host}-${i}.ns.svc.cluster.local`);

function encoded(init: { resourceNames: string[]; responseNonce?: string; versionInfo?: string }): Buffer {
  const req = create(discovery.DiscoveryRequestSchema, { typeUrl: TypeUrl.Endpoint, ...init });
  return Buffer.from(toBinary(discovery.DiscoveryRequestSchema, req));
}

test("ACKs naming the same clusters share one frozen list; each decodes as protobuf-es decodes it", () => {
  const decoder = new DiscoveryRequestDecoder();
  const names = clusters(200);
  const first = encoded({ resourceNames: names, responseNonce: "c1-1", versionInfo: "v1" });
  const second = encoded({ resourceNames: names, responseNonce: "c2-7", versionInfo: "v2" });
  const a = decoder.decode(first);
  const b = decoder.decode(second);
  assert.deepEqual(a, fromBinary(discovery.DiscoveryRequestSchema, first));
  assert.deepEqual(b, fromBinary(discovery.DiscoveryRequestSchema, second));
  assert.equal(b.resourceNames, a.resourceNames, "one list for both");
  assert.ok(Object.isFrozen(b.resourceNames));
  assert.equal(b.responseNonce, "c2-7");
});

test("other names, a list of the same length, a short list, names split by another field: each decoded as it is", () => {
  const decoder = new DiscoveryRequestDecoder();
  const shared = decoder.decode(encoded({ resourceNames: clusters(200) })).resourceNames;
  const sameLength = encoded({ resourceNames: clusters(200, "abc") });
  const other = decoder.decode(sameLength);
  assert.notEqual(other.resourceNames, shared);
  assert.deepEqual(other, fromBinary(discovery.DiscoveryRequestSchema, sameLength));

  const short = encoded({ resourceNames: ["outbound|80||a.ns.svc.cluster.local", "ünïcode"] });
  assert.deepEqual(decoder.decode(short), fromBinary(discovery.DiscoveryRequestSchema, short));

  // Two encoded messages one after the other are one message: its names come in two runs with the
  // type URL between them.
  const split = Buffer.concat([
    encoded({ resourceNames: clusters(100) }),
    encoded({ resourceNames: clusters(100, "more"), responseNonce: "n" }),
  ]);
  const decoded = decoder.decode(split);
  assert.deepEqual(decoded, fromBinary(discovery.DiscoveryRequestSchema, split));
  assert.equal(decoded.resourceNames.length, 200);
});

test("bytes that are not a request fail as protobuf-es fails them", () => {
  const decoder = new DiscoveryRequestDecoder();
  const garbage = Buffer.from([0x1a, 0xff, 0xff, 0xff, 0x0f, 0x01]);
  assert.throws(() => fromBinary(discovery.DiscoveryRequestSchema, garbage));
  assert.throws(() => decoder.decode(garbage));
});

test("fields of every wire type around the names are stepped over; a field running past the end fails as protobuf-es fails it", () => {
  const decoder = new DiscoveryRequestDecoder();
  const names = clusters(200);
  // Unknown fields 97 (fixed32), 98 (fixed64) and 99 (a 10-byte varint), as a newer Envoy might send.
  const unknown = Buffer.from([
    ...[0x8d, 0x06, 1, 2, 3, 4],
    ...[0x91, 0x06, 1, 2, 3, 4, 5, 6, 7, 8],
    ...[0x98, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
  ]);
  const first = decoder.decode(encoded({ resourceNames: names }));
  const withUnknown = Buffer.concat([unknown, encoded({ resourceNames: names, responseNonce: "n" }), unknown]);
  const decoded = decoder.decode(withUnknown);
  assert.deepEqual(decoded, fromBinary(discovery.DiscoveryRequestSchema, withUnknown));
  assert.equal(decoded.resourceNames, first.resourceNames, "the names were found between the unknown fields");

  const overrun = Buffer.concat([encoded({ resourceNames: names }), Buffer.from([0x2a, 0x05, 0x61])]);
  assert.throws(() => fromBinary(discovery.DiscoveryRequestSchema, overrun));
  assert.throws(() => decoder.decode(overrun));
});
