// One version of the echo service: a plain gRPC server that answers every call with its version, so
// a client can count where its calls went. It needs nothing from the mesh: the routing happens in
// the client, whose gRPC library gets the VirtualService's split from Sluice over xDS.
//
//   node --import tsx examples/proxyless/echo-server.ts --port 17071 --version v1
//
// It prints `echo <version> serving on 127.0.0.1:<port>` once it listens (--port 0 picks a free port).
import { parseArgs } from "node:util";
import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from "@grpc/grpc-js";
import { ECHO_METHOD } from "./echo.ts";

const { values } = parseArgs({
  options: { port: { type: "string", default: "0" }, version: { type: "string" } },
});
const port = Number(values.port);
const version = values.version;
if (!Number.isInteger(port) || port < 0 || !version) {
  process.stderr.write("usage: echo-server.ts --version NAME [--port PORT]\n");
  process.exit(2);
}

const server = new Server();
const answer = (_call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) =>
  callback(null, Buffer.from(version));
server.addService({ echo: ECHO_METHOD }, { echo: answer });
server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err, boundPort) => {
  if (err) {
    process.stderr.write(`echo ${version}: cannot serve on 127.0.0.1:${port}: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`echo ${version} serving on 127.0.0.1:${boundPort}\n`);
});
process.once("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
