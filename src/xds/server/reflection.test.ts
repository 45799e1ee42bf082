import assert from "node:assert/strict";
import { test } from "node:test";
import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Client, credentials, Server, ServerCredentials } from "@grpc/grpc-js";
import { discovery, registry } from "../../api/index.ts";
import { addReflection } from "./reflection.ts";

/** Fields of one message level: field number → raw values (bytes for length-delimited). */
function fields(bytes: Uint8Array): Map<number, (Uint8Array | number)[]> {
  const r = new BinaryReader(bytes);
  const out = new Map<number, (Uint8Array | number)[]>();
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    const v = wt === WireType.LengthDelimited ? r.bytes() : r.int32();
    out.set(no, [...(out.get(no) ?? []), v]);
  }
  return out;
}

const text = (b: Uint8Array | number) => new TextDecoder().decode(b as Uint8Array);

async function ask(address: string, version: "v1" | "v1alpha", build: (w: BinaryWriter) => void) {
  const client = new Client(address, credentials.createInsecure());
  const stream = client.makeBidiStreamRequest(
    `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`,
    (b: Uint8Array) => Buffer.from(b),
    (b: Buffer) => new Uint8Array(b),
  );
  const w = new BinaryWriter();
  build(w);
  const answer = new Promise<Uint8Array>((resolve, reject) => {
    stream.on("data", resolve);
    stream.on("error", reject);
  });
  stream.write(w.finish());
  const res = await answer;
  stream.end();
  client.close();
  return fields(res);
}

test("reflection lists the services and describes ADS with its dependencies (v1 and v1alpha)", async () => {
  const server = new Server();
  addReflection(server, registry, [discovery.AggregatedDiscoveryService]);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  const address = `127.0.0.1:${port}`;
  try {
    const listed = await ask(address, "v1", (w) => w.tag(7, WireType.LengthDelimited).string("*"));
    const services = (listed.get(6) ?? []).flatMap((list) =>
      (fields(list as Uint8Array).get(1) ?? []).map((svc) => text(fields(svc as Uint8Array).get(1)![0])),
    );
    assert.deepEqual(services, [
      "envoy.service.discovery.v3.AggregatedDiscoveryService",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
    ]);

    const described = await ask(address, "v1alpha", (w) =>
      w.tag(4, WireType.LengthDelimited).string("envoy.service.discovery.v3.AggregatedDiscoveryService"),
    );
    const files = (fields(described.get(4)![0] as Uint8Array).get(1) ?? []).map(
      (b) => fromBinary(FileDescriptorProtoSchema, b as Uint8Array).name,
    );
    assert.equal(files[0], "envoy/service/discovery/v3/ads.proto");
    assert.ok(files.includes("envoy/service/discovery/v3/discovery.proto"));
    assert.ok(files.includes("google/protobuf/any.proto"));

    const missing = await ask(address, "v1", (w) => w.tag(3, WireType.LengthDelimited).string("nope.proto"));
    const error = fields(missing.get(7)![0] as Uint8Array);
    assert.equal(error.get(1)![0], 5, "NOT_FOUND");
  } finally {
    server.forceShutdown();
  }
});
