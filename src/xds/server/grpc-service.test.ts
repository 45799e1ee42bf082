import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import {
  Client,
  credentials,
  Server,
  ServerCredentials,
  type ServerDuplexStream,
  type ServiceDefinition,
} from "@grpc/grpc-js";
import { deserializer, grpcServiceDefinition, methodPath, serializer } from "../../api/grpc-service.ts";
import { cluster, discovery } from "../../api/index.ts";
import { UnwrittenResponse } from "../../api/outgoing-response.ts";
import { NO_MEMOS } from "../../util/memo.ts";
import { encodeResource, encodeSotwResponse } from "../encode.ts";
import { TypeUrl } from "../types.ts";

const ads = discovery.AggregatedDiscoveryService;

/** A list of `count` clusters with long names, so lists of different counts differ in size. */
function clusters(prefix: string, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const name = `${prefix}-${i}-${"x".repeat(100)}`;
    return encodeResource({ name, resource: create(cluster.ClusterSchema, { name }) });
  });
}

test("responses written when sent arrive intact when written back to back on one stream", async () => {
  // Sizes up and down: the scratch buffer grows under one response, then serves a smaller one.
  const lists = [clusters("a", 3), clusters("b", 300), clusters("c", 1), clusters("d", 50)];
  const responses = lists.map((resources, i) =>
    encodeSotwResponse(NO_MEMOS, { versionInfo: `v${i}`, typeUrl: TypeUrl.Cluster, nonce: `n${i}`, resources }),
  );
  for (const r of responses) assert.ok(r instanceof UnwrittenResponse);
  const server = new Server();
  server.addService(grpcServiceDefinition(ads) as ServiceDefinition, {
    streamAggregatedResources: (call: ServerDuplexStream<unknown, unknown>) => {
      // No waiting between writes: gRPC buffers all but the first and serializes them later.
      for (const r of responses) call.write(r);
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    const m = ads.method.streamAggregatedResources;
    const stream = client.makeBidiStreamRequest(methodPath(m), serializer(m.input), deserializer(m.output));
    const received: discovery.DiscoveryResponse[] = [];
    await new Promise<void>((resolve, reject) => {
      stream.on("data", (res: discovery.DiscoveryResponse) => received.push(res));
      stream.on("status", () => resolve());
      stream.on("error", reject);
    });
    assert.deepEqual(
      received.map((res) => [res.versionInfo, res.nonce, res.resources.length]),
      lists.map((list, i) => [`v${i}`, `n${i}`, list.length]),
    );
    for (const [i, res] of received.entries()) {
      assert.deepEqual(
        res.resources.map((any) => anyUnpack(any, cluster.ClusterSchema)?.name),
        lists[i].map((r) => r.name),
      );
    }
  } finally {
    client.close();
    server.forceShutdown();
  }
});
