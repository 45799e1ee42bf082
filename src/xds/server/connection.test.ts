import assert from "node:assert/strict";
import { connect, constants } from "node:http2";
import { type TestContext, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { LARGE, openStream, readMessage, startServer } from "../../../test/support/raw-ads.ts";
import { cluster } from "../../api/index.ts";
import { MemoStore } from "../../util/memo.ts";
import { encodeResources } from "../encode.ts";
import { TypeUrl } from "../types.ts";
import { Watch } from "./connection.ts";

const memos = new MemoStore();

/** A flag set once `promise` settles: checks that it is still pending without waiting for it. */
function settledFlag(promise: Promise<unknown>): { settled: boolean } {
  const flag = { settled: false };
  const set = () => {
    flag.settled = true;
  };
  promise.then(set, set);
  return flag;
}

/** A server whose streams become Connections and an HTTP/2 session to it, both closed after the test. */
async function serve(t: TestContext) {
  const server = await startServer();
  const session = connect(`http://${server.address}`);
  t.after(() => {
    session.destroy();
    server.stop();
  });
  return { server, session };
}

test("send resolves when the transport took the bytes: a proxy that does not read keeps it pending", async (t) => {
  const { server, session } = await serve(t);
  const slow = openStream(session);
  const slowConn = await server.accepted();
  const sending = slowConn.send(new Uint8Array(LARGE));
  const sent = settledFlag(sending);

  // A second stream on the same HTTP/2 connection, read at once, is served while the first waits.
  const quick = openStream(session);
  const quickConn = await server.accepted();
  const received = readMessage(quick, 3);
  assert.equal(await quickConn.send(new Uint8Array([1, 2, 3])), true);
  assert.deepEqual([...(await received)], [1, 2, 3]);
  assert.equal(sent.settled, false, "the unread response is still pending");

  // Reading lets the rest through.
  assert.equal((await readMessage(slow, LARGE)).length, LARGE);
  assert.equal(await sending, true);
});

test("a cancelled stream settles its pending send with false, and later sends at once", async (t) => {
  const { server, session } = await serve(t);
  const stream = openStream(session);
  const conn = await server.accepted();
  const pending = conn.send(new Uint8Array(LARGE));
  stream.close(constants.NGHTTP2_CANCEL);
  assert.equal(await pending, false);
  assert.equal(conn.closed, true);
  assert.equal(await conn.send(new Uint8Array([1])), false);
});

test("a delta watch holding exactly a generated list shares the list's versions map; changes are kept over it", () => {
  const clusters = ["a", "b"].map((name) => ({ name, resource: create(cluster.ClusterSchema, { name }) }));
  const list = encodeResources(memos, clusters);
  const w = new Watch(TypeUrl.Cluster, []);
  w.recordDelta(list.resources, [], list.versions);
  assert.equal(w.known, list.versions, "a first response: the list's own map");

  w.setKnown("a", undefined); // unsubscribed
  assert.notEqual(w.known, list.versions);
  assert.deepEqual([...w.known.keys()], ["b"]);
  assert.deepEqual([...list.versions.keys()], ["a", "b"], "the shared map is never changed");

  w.recordDelta(list.resources.slice(0, 1), [], list.versions);
  assert.equal(w.known, list.versions, "holding the whole list again: shared again");

  // An incremental response (one resource of a new list): held over the shared map, which stays as it was.
  const newer = encodeResources(memos, [
    { name: "a", resource: create(cluster.ClusterSchema, { name: "a", altStatName: "x" }) },
  ]);
  w.recordDelta(newer.resources, [], newer.versions);
  assert.equal(w.knownVersion("a"), newer.resources[0].version);
  assert.equal(w.knownVersion("b"), list.versions.get("b"));
  assert.notEqual(w.knownVersion("a"), list.versions.get("a"));
  assert.deepEqual([...w.knownNames()].sort(), ["a", "b"]);
  assert.equal(list.versions.get("a"), list.resources[0].version, "the shared map is never changed");

  const other = new Watch(TypeUrl.Cluster, []);
  other.setKnown("kept", "v0"); // held from before a reconnect, not in the list
  other.recordDelta(list.resources, [], list.versions);
  assert.notEqual(other.known, list.versions);
  assert.deepEqual(Object.fromEntries(other.known), { kept: "v0", ...Object.fromEntries(list.versions) });
  other.recordDelta([], ["kept"], list.versions);
  assert.equal(other.known, list.versions);

  const partial = new Watch(TypeUrl.Cluster, []);
  partial.recordDelta(list.resources.slice(1), [], list.versions);
  assert.notEqual(partial.known, list.versions, "a first response of part of the list: not the list");
  assert.deepEqual([...partial.known.keys()], ["b"]);
  const stale = new Watch(TypeUrl.Cluster, []);
  stale.recordDelta([newer.resources[0], list.resources[1]], [], list.versions);
  assert.notEqual(stale.known, list.versions, "a first response of other versions: not the list");
});

test("watches come in Istio's push order whatever order they were added in, unknown types last", async (t) => {
  const { server, session } = await serve(t);
  openStream(session);
  const conn = await server.accepted();
  const other = "type.googleapis.com/example.Other";
  for (const type of [other, TypeUrl.Route, TypeUrl.Listener, TypeUrl.Endpoint, TypeUrl.Cluster]) {
    conn.watches.set(type, new Watch(type, []));
  }
  assert.deepEqual(
    conn.orderedWatches().map((w) => w.typeUrl),
    [TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route, other],
  );
});
