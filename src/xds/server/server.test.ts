import assert from "node:assert/strict";
import { connect, constants } from "node:http2";
import { test } from "node:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { Server, ServerCredentials, type ServiceDefinition } from "@grpc/grpc-js";
import { sidecarNode } from "../../../test/xds/ads-client.ts";
import { testGenerators } from "../../../test/xds/fixtures.ts";
import { discovery } from "../../api/index.ts";
import { newPushContext } from "../../model/push-context.ts";
import type { Authenticator, Caller } from "./auth.ts";
import type { AdsStream } from "./connection.ts";
import { methodPath } from "./grpc-service.ts";
import { adsServiceDefinition, XdsServer } from "./server.ts";

/** One gRPC frame (flag, length, bytes) holding a first SotW request from a sidecar. */
function firstRequestFrame(): Buffer {
  const request = toBinary(
    discovery.DiscoveryRequestSchema,
    create(discovery.DiscoveryRequestSchema, { node: sidecarNode("gone"), typeUrl: "t" }),
  );
  const frame = Buffer.alloc(5 + request.length);
  frame.writeUInt32BE(request.length, 1);
  frame.set(request, 5);
  return frame;
}

test("a stream cancelled while its first request is being authenticated leaves no connection behind", async (t) => {
  // An authenticator that answers only when the test says (a TokenReview round trip, say).
  let asked!: () => void;
  const authenticating = new Promise<void>((resolve) => {
    asked = resolve;
  });
  let answer!: (caller: Caller) => void;
  const answered = new Promise<Caller>((resolve) => {
    answer = resolve;
  });
  const slow: Authenticator = {
    name: "slow",
    authenticate: () => {
      asked();
      return answered;
    },
  };
  const xds = new XdsServer({
    generators: testGenerators(),
    initialPush: newPushContext({}),
    authenticators: [slow],
    identityCheck: false,
  });
  // The secure handlers on a plaintext server: authentication runs, the transport stays simple.
  const handlers = xds.service(true);
  const serve = handlers.streamAggregatedResources as (call: AdsStream) => void;
  let cancelled!: () => void;
  const sawCancel = new Promise<void>((resolve) => {
    cancelled = resolve;
  });
  const server = new Server();
  server.addService(adsServiceDefinition as ServiceDefinition, {
    ...handlers,
    streamAggregatedResources: (call: AdsStream) => {
      call.on("cancelled", () => cancelled());
      serve(call);
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const session = connect(`http://127.0.0.1:${port}`);
  t.after(() => {
    session.destroy();
    server.forceShutdown();
  });

  const stream = session.request({
    ":method": "POST",
    ":path": methodPath(discovery.AggregatedDiscoveryService.method.streamAggregatedResources),
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.write(firstRequestFrame());
  await authenticating;
  stream.close(constants.NGHTTP2_CANCEL);
  await sawCancel;
  answer({ identities: ["spiffe://cluster.local/ns/default/sa/app"], authenticator: "slow" });
  // What follows the authenticator's answer runs in promise callbacks, all done before the next turn.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    xds.syncStatus().map((s) => s.connectionId),
    [],
  );
});
