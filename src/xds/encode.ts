// Encoding generated resources into xDS responses. protobuf-es encoding is slow, so each resource
// object is encoded once (cached by object identity) and responses are assembled from the cached
// bytes: a resource sent to 1,000 proxies is encoded once.
import { createHash } from "node:crypto";
import { type Message, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import { discovery, registry, typeUrl } from "../api/index.ts";
import type { XdsResource } from "./generator.ts";

export interface EncodedResource {
  name: string;
  /** The resource as an encoded `google.protobuf.Any`. */
  any: Uint8Array;
  /** The generator's version, else a hash of `any`. */
  version: string;
}

interface Encoded {
  any: Uint8Array;
  hash: string;
}

const encodedByObject = new WeakMap<Message, Encoded>();

function isAny(m: Message): m is Any {
  return m.$typeName === "google.protobuf.Any";
}

/** The encoded Any of a resource message (or Any), computed once per object. */
function encoded(resource: Message): Encoded {
  const hit = encodedByObject.get(resource);
  if (hit) return hit;
  let any: Uint8Array;
  if (isAny(resource)) {
    any = toBinary(AnySchema, resource);
  } else {
    const schema = registry.getMessage(resource.$typeName);
    if (!schema) throw new Error(`xds: resource type ${resource.$typeName} is not in the API registry`);
    any = encodeAny(typeUrl(schema), toBinary(schema, resource));
  }
  const entry = { any, hash: createHash("sha256").update(any).digest("base64url").slice(0, 16) };
  encodedByObject.set(resource, entry);
  return entry;
}

function encodeAny(url: string, value: Uint8Array): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).string(url);
  w.tag(2, WireType.LengthDelimited).bytes(value);
  return w.finish();
}

export function encodeResource(r: XdsResource): EncodedResource {
  const e = encoded(r.resource);
  return { name: r.name, any: e.any, version: r.version ?? e.hash };
}

const F = discovery.DiscoveryResponseSchema.field;
const DF = discovery.DeltaDiscoveryResponseSchema.field;
const RF = discovery.ResourceSchema.field;

export interface SotwResponse {
  versionInfo: string;
  typeUrl: string;
  nonce: string;
  resources: readonly EncodedResource[];
  /** An encoded envoy.config.core.v3.ControlPlane. */
  controlPlane?: Uint8Array;
}

/** An encoded DiscoveryResponse built from already-encoded resources. */
export function encodeSotwResponse(r: SotwResponse): Uint8Array {
  const w = new BinaryWriter();
  w.tag(F.versionInfo.number, WireType.LengthDelimited).string(r.versionInfo);
  for (const res of r.resources) w.tag(F.resources.number, WireType.LengthDelimited).bytes(res.any);
  w.tag(F.typeUrl.number, WireType.LengthDelimited).string(r.typeUrl);
  w.tag(F.nonce.number, WireType.LengthDelimited).string(r.nonce);
  if (r.controlPlane) w.tag(F.controlPlane.number, WireType.LengthDelimited).bytes(r.controlPlane);
  return w.finish();
}

export interface DeltaResponse {
  systemVersionInfo: string;
  typeUrl: string;
  nonce: string;
  resources: readonly EncodedResource[];
  removed: readonly string[];
  controlPlane?: Uint8Array;
}

/** An encoded DeltaDiscoveryResponse built from already-encoded resources. */
export function encodeDeltaResponse(r: DeltaResponse): Uint8Array {
  const w = new BinaryWriter();
  w.tag(DF.systemVersionInfo.number, WireType.LengthDelimited).string(r.systemVersionInfo);
  for (const res of r.resources) {
    w.tag(DF.resources.number, WireType.LengthDelimited).fork();
    w.tag(RF.version.number, WireType.LengthDelimited).string(res.version);
    w.tag(RF.resource.number, WireType.LengthDelimited).bytes(res.any);
    w.tag(RF.name.number, WireType.LengthDelimited).string(res.name);
    w.join();
  }
  w.tag(DF.typeUrl.number, WireType.LengthDelimited).string(r.typeUrl);
  w.tag(DF.nonce.number, WireType.LengthDelimited).string(r.nonce);
  for (const name of r.removed) w.tag(DF.removedResources.number, WireType.LengthDelimited).string(name);
  if (r.controlPlane) w.tag(DF.controlPlane.number, WireType.LengthDelimited).bytes(r.controlPlane);
  return w.finish();
}
