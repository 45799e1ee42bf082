// The echo service's one method, shared by the server and the client. Messages are raw bytes (no
// .proto file to compile): the request is empty and the answer is the server's version, e.g. "v1".
import type { MethodDefinition } from "@grpc/grpc-js";

const bytes = (b: Buffer) => b;

export const ECHO_METHOD: MethodDefinition<Buffer, Buffer> = {
  path: "/sluice.examples.Echo/Echo",
  requestStream: false,
  responseStream: false,
  requestSerialize: bytes,
  requestDeserialize: bytes,
  responseSerialize: bytes,
  responseDeserialize: bytes,
};

/** The service the client calls: the ServiceEntry's host and port, through the xDS resolver. */
export const ECHO_TARGET = "xds:///echo.default.svc.cluster.local:7070";
