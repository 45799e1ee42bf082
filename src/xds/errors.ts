// An error a generator raises to end the proxy's stream with a gRPC status, as Istio's generators
// return status errors (Unauthenticated, PermissionDenied, InvalidArgument).
import type { status } from "@grpc/grpc-js";

export class XdsError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
    this.name = "XdsError";
  }
}
