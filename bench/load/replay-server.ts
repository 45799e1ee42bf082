// The lower bound of the load test: a trivial ADS server that answers each proxy's first request of a
// type with the response a real proxy of the same namespace got from sluiced (recorded by the load
// worker), and ignores ACKs. The same load process syncing against it measures what merely receiving
// and reading the bytes costs. Run as a child process: argv[2] is the recording; it prints its port.
import { readFileSync } from "node:fs";
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import { grpcServiceDefinition } from "../../src/api/grpc-service.ts";
import { discovery } from "../../src/api/index.ts";
import type { Recording } from "./messages.ts";

const recording = JSON.parse(readFileSync(process.argv[2] ?? "", "utf8")) as Recording;
const responses = new Map(
  Object.entries(recording).map(([namespace, byType]) => [
    namespace,
    new Map(Object.entries(byType).map(([typeUrl, base64]) => [typeUrl, Buffer.from(base64, "base64")])),
  ]),
);

type AnyRequest = discovery.DiscoveryRequest | discovery.DeltaDiscoveryRequest;

/** Sends the recorded response to the first request of each type that is not an ACK. */
function replay(stream: ServerDuplexStream<AnyRequest, Uint8Array>): void {
  let shape: Map<string, Buffer> | undefined;
  const answered = new Set<string>();
  stream.on("data", (req: AnyRequest) => {
    if (req.node) {
      const namespace = req.node.metadata?.NAMESPACE;
      shape = responses.get(typeof namespace === "string" ? namespace : "");
    }
    if (req.responseNonce !== "" || answered.has(req.typeUrl)) return;
    answered.add(req.typeUrl);
    const response = shape?.get(req.typeUrl);
    if (response) stream.write(response);
  });
  stream.on("end", () => stream.end());
  stream.on("error", () => {});
}

const server = new Server({ "grpc.max_send_message_length": -1 });
server.addService(grpcServiceDefinition(discovery.AggregatedDiscoveryService), {
  streamAggregatedResources: replay,
  deltaAggregatedResources: replay,
});
server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  console.log(JSON.stringify({ msg: "replay server listening", port }));
});
process.on("SIGTERM", () => {
  server.forceShutdown();
  process.exit(0);
});
