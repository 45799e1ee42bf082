import assert from "node:assert/strict";
import { type ClientHttp2Session, type ClientHttp2Stream, connect, constants } from "node:http2";
import { test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { cluster, core, discovery } from "../../api/index.ts";
import { parseProxy } from "../../model/proxy.ts";
import { newPushContext } from "../../model/push-context.ts";
import { encodeResources } from "../encode.ts";
import { TypeUrl } from "../types.ts";
import { type AdsStream, Connection, Watch } from "./connection.ts";
import { methodPath } from "./grpc-service.ts";
import { adsServiceDefinition } from "./server.ts";

// Far more than the HTTP/2 flow-control windows, so it cannot all reach a proxy that does not read.
const LARGE = 8 * 1024 * 1024;

/** A grpc-js server on 127.0.0.1:0 whose ADS streams become Connections, handed out in order. */
async function startServer(): Promise<{ address: string; accepted: () => Promise<Connection>; stop: () => void }> {
  const connections: Connection[] = [];
  let opened = 0;
  const waiting: Array<(c: Connection) => void> = [];
  const node = create(core.NodeSchema, { id: "sidecar~10.0.0.1~app-1.default~default.svc.cluster.local" });
  const proxy = parseProxy(node).proxy;
  assert.ok(proxy);
  const open = (stream: AdsStream) => {
    const conn = new Connection(`c${++opened}`, proxy, "sotw", "peer", [], newPushContext({}), stream);
    const waiter = waiting.shift();
    if (waiter) waiter(conn);
    else connections.push(conn);
  };
  const server = new Server();
  server.addService(adsServiceDefinition, { streamAggregatedResources: open, deltaAggregatedResources: open });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    address: `127.0.0.1:${port}`,
    accepted: () => {
      const conn = connections.shift();
      return conn ? Promise.resolve(conn) : new Promise((resolve) => waiting.push(resolve));
    },
    stop: () => server.forceShutdown(),
  };
}

/**
 * Opens an ADS stream over plain HTTP/2, as Envoy does: what it does not read stays in HTTP/2 flow
 * control (a grpc-js client would buffer whole messages before the application reads).
 */
function openStream(session: ClientHttp2Session): ClientHttp2Stream {
  const method = discovery.AggregatedDiscoveryService.method.streamAggregatedResources;
  const stream = session.request({
    ":method": "POST",
    ":path": methodPath(method),
    "content-type": "application/grpc",
    te: "trailers",
  });
  // The server sees the stream once a message arrives: one gRPC frame (flag, length, bytes).
  const request = toBinary(
    discovery.DiscoveryRequestSchema,
    create(discovery.DiscoveryRequestSchema, { typeUrl: "t" }),
  );
  const frame = Buffer.alloc(5 + request.length);
  frame.writeUInt32BE(request.length, 1);
  frame.set(request, 5);
  stream.write(frame);
  return stream;
}

/** Reads `size` bytes of gRPC message (after the 5-byte frame header) from the stream. */
function readMessage(stream: ClientHttp2Stream, size: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let received = 0;
  return new Promise((resolve) => {
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received < 5 + size) return;
      stream.off("data", onData);
      stream.pause();
      resolve(Buffer.concat(chunks).subarray(5, 5 + size));
    };
    stream.on("data", onData);
  });
}

/** Resolves with whether `promise` settled, and how, without waiting for it. */
function track<T>(promise: Promise<T>): { settled: boolean; value?: T; error?: unknown } {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

test("send resolves when the transport took the bytes: a proxy that does not read keeps it pending", async (t) => {
  const server = await startServer();
  const session = connect(`http://${server.address}`);
  t.after(() => {
    session.destroy();
    server.stop();
  });
  const slow = openStream(session);
  const slowConn = await server.accepted();
  const sent = track(slowConn.send(new Uint8Array(LARGE)));

  // A second stream on the same HTTP/2 connection, read at once, is served while the first waits.
  const quick = openStream(session);
  const quickConn = await server.accepted();
  const received = readMessage(quick, 3);
  assert.equal(await quickConn.send(new Uint8Array([1, 2, 3])), true);
  assert.deepEqual([...(await received)], [1, 2, 3]);
  assert.equal(sent.settled, false, "the unread response is still pending");

  // Reading lets the rest through.
  assert.equal((await readMessage(slow, LARGE)).length, LARGE);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(sent, { settled: true, value: true });
});

test("a cancelled stream settles its pending send with false, and later sends at once", async (t) => {
  const server = await startServer();
  const session = connect(`http://${server.address}`);
  t.after(() => {
    session.destroy();
    server.stop();
  });
  const stream = openStream(session);
  const conn = await server.accepted();
  const pending = conn.send(new Uint8Array(LARGE));
  stream.close(constants.NGHTTP2_CANCEL);
  assert.equal(await pending, false);
  assert.equal(conn.closed, true);
  assert.equal(await conn.send(new Uint8Array([1])), false);
});

test("a delta watch holding exactly a generated list shares the list's versions map; changes copy it", () => {
  const clusters = ["a", "b"].map((name) => ({ name, resource: create(cluster.ClusterSchema, { name }) }));
  const list = encodeResources(clusters);
  const w = new Watch(TypeUrl.Cluster, []);
  w.recordDelta(list.resources, [], list.versions);
  assert.equal(w.known, list.versions, "a first response: the list's own map");

  w.setKnown("a", undefined); // unsubscribed
  assert.notEqual(w.known, list.versions);
  assert.deepEqual([...w.known.keys()], ["b"]);
  assert.deepEqual([...list.versions.keys()], ["a", "b"], "the shared map is never changed");

  w.recordDelta(list.resources.slice(0, 1), [], list.versions);
  assert.equal(w.known, list.versions, "holding the whole list again: shared again");

  const other = new Watch(TypeUrl.Cluster, []);
  other.setKnown("kept", "v0"); // held from before a reconnect, not in the list
  other.recordDelta(list.resources, [], list.versions);
  assert.notEqual(other.known, list.versions);
  assert.deepEqual(Object.fromEntries(other.known), { kept: "v0", ...Object.fromEntries(list.versions) });
  other.recordDelta([], ["kept"], list.versions);
  assert.equal(other.known, list.versions);
});
