// @grpc/grpc-js service definitions from protobuf-es service descriptors: the method path and
// toBinary/fromBinary as (de)serializers. A response may also be given as already-encoded bytes, or
// as a response to write when sent (outgoing-response.ts), which the xDS server uses to send responses
// assembled from cached resource encodings. Also what a service served beside ADS (Istio's CA) is
// given and sees of a call.
import {
  type DescMessage,
  type DescMethod,
  type DescService,
  fromBinary,
  type Message,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import type { MethodDefinition, ServerUnaryCall, UntypedServiceImplementation } from "@grpc/grpc-js";
import { type OutgoingResponse, outgoingBytes, UnwrittenResponse } from "./outgoing-response.ts";

/** The gRPC path of a method: `/package.Service/Method`. */
export function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/**
 * Encodes a message, passes already-encoded bytes through, or writes an unwritten response into the
 * encoder's scratch buffer: grpc-js copies what a serializer returns into its frame before it
 * serializes another message, so the scratch is free again by the next call.
 */
export function serializer<Desc extends DescMessage>(
  schema: Desc,
): (value: MessageShape<Desc> | OutgoingResponse) => Buffer {
  return (value) => {
    const bytes =
      value instanceof Uint8Array || value instanceof UnwrittenResponse
        ? outgoingBytes(value)
        : toBinary(schema, value);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

export function deserializer<Desc extends DescMessage>(schema: Desc): (bytes: Buffer) => MessageShape<Desc> {
  return (bytes) => fromBinary(schema, bytes);
}

/** One definition per method, keyed by the method's local name (`streamAggregatedResources`). */
export function grpcServiceDefinition(
  service: DescService,
): Record<string, MethodDefinition<Message | Uint8Array, Message | OutgoingResponse>> {
  const definition: Record<string, MethodDefinition<Message | Uint8Array, Message | OutgoingResponse>> = {};
  for (const method of service.methods) {
    definition[method.localName] = {
      path: methodPath(method),
      originalName: method.name,
      requestStream: method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming",
      responseStream: method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming",
      requestSerialize: serializer(method.input),
      requestDeserialize: deserializer(method.input),
      responseSerialize: serializer(method.output),
      responseDeserialize: deserializer(method.output),
    };
  }
  return definition;
}

/** What authentication reads of any call (grpc-js does not export its ServerSurfaceCall). */
export type CallSurface = Pick<ServerUnaryCall<unknown, unknown>, "getAuthContext" | "metadata" | "getPeer">;

/** A gRPC service served beside ADS (Istio's CA), on the TLS port only unless `plaintext`. */
export interface ExtraService {
  service: DescService;
  implementation: UntypedServiceImplementation;
  plaintext?: boolean;
}
