// ADS streams for tests of the server's connection layer: a grpc-js server on 127.0.0.1:0 whose
// streams become Connections, and a client speaking plain HTTP/2 as Envoy does, so what it does not
// read stays in HTTP/2 flow control (a grpc-js client buffers whole messages before its reader asks).
import assert from "node:assert/strict";
import type { ClientHttp2Session, ClientHttp2Stream } from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { methodPath } from "../../src/api/grpc-service.ts";
import { core, discovery } from "../../src/api/index.ts";
import { parseProxy } from "../../src/model/proxy.ts";
import { newPushContext } from "../../src/model/push-context.ts";
import { type AdsStream, Connection } from "../../src/xds/server/connection.ts";
import { adsServiceDefinition } from "../../src/xds/server/server.ts";

// Far more than the HTTP/2 flow-control windows, so it cannot all reach a proxy that does not read.
export const LARGE = 8 * 1024 * 1024;

/** A grpc-js server on 127.0.0.1:0 whose ADS streams become Connections, handed out in order. */
export async function startServer(): Promise<{
  address: string;
  accepted: () => Promise<Connection>;
  stop: () => void;
}> {
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

/** Opens an ADS stream over plain HTTP/2; nothing is read until the test reads. */
export function openStream(session: ClientHttp2Session): ClientHttp2Stream {
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
export function readMessage(stream: ClientHttp2Stream, size: number): Promise<Buffer> {
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
