// One version of the echo service, as a proxyless gRPC workload: an xDS-enabled server (grpc-js-xds's
// XdsServer) that answers every call with its version, so a client can count where its calls went.
// It reads the bootstrap file named by GRPC_XDS_BOOTSTRAP (written by `sluice-agent grpc-bootstrap`),
// asks Sluice for its inbound listener `xds.istio.io/grpc/lds/inbound/127.0.0.1:<port>` and starts
// serving only once Sluice sends it, that is once a workload of the mesh's echo service has this port.
//
//   GRPC_XDS_BOOTSTRAP=echo-v1.json node --import tsx examples/proxyless/echo-server.ts --port 17071 --version v1
//
// It prints `echo <version> serving on 127.0.0.1:<port>` once it serves.
import { parseArgs } from "node:util";
import { ServerCredentials, type ServerUnaryCall, type sendUnaryData } from "@grpc/grpc-js";
import { register, XdsServer } from "@grpc/grpc-js-xds";
import { ECHO_METHOD } from "./echo.ts";

const { values } = parseArgs({
  options: { port: { type: "string" }, version: { type: "string" } },
});
const port = Number(values.port);
const version = values.version;
if (!Number.isInteger(port) || port <= 0 || !version) {
  process.stderr.write("usage: echo-server.ts --port PORT --version NAME\n");
  process.exit(2);
}

// register() also installs the HTTP filters (router, fault, RBAC) a server listener's chains name.
register();
const server = new XdsServer();
const answer = (_call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) =>
  callback(null, Buffer.from(version));
server.addService({ echo: ECHO_METHOD }, { echo: answer });
// An xDS server needs its port before binding (its listener's name carries it): no port 0.
server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err) => {
  if (err) {
    process.stderr.write(`echo ${version}: cannot serve on 127.0.0.1:${port}: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`echo ${version} serving on 127.0.0.1:${port}\n`);
});
process.once("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
