// What a load-test proxy reads of an xDS response, straight from the wire: the envelope, each
// resource's name and encoded value, and the EDS name of a cluster. Only listeners are fully decoded
// (their route names sit deep in HTTP connection managers); everything else stays bytes, so the load
// process spends its time receiving, as the lower-bound replay run measures. SotW requests are written
// with their resource names encoded once (sotwRequest).
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { cluster, discovery, listener, route } from "../../src/api/index.ts";

export interface WireResource {
  /** The delta Resource's name; empty in SotW responses. */
  name: string;
  /** The encoded resource message (the Any's value). */
  value: Uint8Array;
}

export interface WireResponse {
  typeUrl: string;
  nonce: string;
  /** version_info (SotW) or system_version_info (delta). */
  version: string;
  resources: WireResource[];
  /** Delta only. */
  removed: string[];
}

/** Calls `visit(field, reader)` for each field; `visit` must read the field's value or return false to skip it. */
function fields(bytes: Uint8Array, visit: (field: number, reader: BinaryReader) => boolean): void {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (!visit(field, reader)) reader.skip(wireType, field);
  }
}

/** The value of an encoded google.protobuf.Any. */
function anyValue(any: Uint8Array): Uint8Array {
  let value: Uint8Array = new Uint8Array();
  fields(any, (field, reader) => {
    if (field !== 2) return false;
    value = reader.bytes();
    return true;
  });
  return value;
}

const SOTW = discovery.DiscoveryResponseSchema.field;
const DELTA = discovery.DeltaDiscoveryResponseSchema.field;
const RESOURCE = discovery.ResourceSchema.field;

export function parseSotwResponse(bytes: Uint8Array): WireResponse {
  const out: WireResponse = { typeUrl: "", nonce: "", version: "", resources: [], removed: [] };
  fields(bytes, (field, reader) => {
    if (field === SOTW.versionInfo.number) out.version = reader.string();
    else if (field === SOTW.typeUrl.number) out.typeUrl = reader.string();
    else if (field === SOTW.nonce.number) out.nonce = reader.string();
    else if (field === SOTW.resources.number) out.resources.push({ name: "", value: anyValue(reader.bytes()) });
    else return false;
    return true;
  });
  return out;
}

export function parseDeltaResponse(bytes: Uint8Array): WireResponse {
  const out: WireResponse = { typeUrl: "", nonce: "", version: "", resources: [], removed: [] };
  fields(bytes, (field, reader) => {
    if (field === DELTA.systemVersionInfo.number) out.version = reader.string();
    else if (field === DELTA.typeUrl.number) out.typeUrl = reader.string();
    else if (field === DELTA.nonce.number) out.nonce = reader.string();
    else if (field === DELTA.removedResources.number) out.removed.push(reader.string());
    else if (field === DELTA.resources.number) out.resources.push(deltaResource(reader.bytes()));
    else return false;
    return true;
  });
  return out;
}

function deltaResource(bytes: Uint8Array): WireResource {
  const out: WireResource = { name: "", value: new Uint8Array() };
  fields(bytes, (field, reader) => {
    if (field === RESOURCE.name.number) out.name = reader.string();
    else if (field === RESOURCE.resource.number) out.value = anyValue(reader.bytes());
    else return false;
    return true;
  });
  return out;
}

const CLUSTER = cluster.ClusterSchema.field;
const EDS_CONFIG = cluster.Cluster_EdsClusterConfigSchema.field;

/** A cluster's name, and the name Envoy asks EDS for (service_name, else the cluster name) when it is an EDS cluster. */
export function clusterEdsName(bytes: Uint8Array): { name: string; eds?: string } {
  let name = "";
  let isEds = false;
  let serviceName = "";
  fields(bytes, (field, reader) => {
    if (field === CLUSTER.name.number) name = reader.string();
    else if (field === CLUSTER.type.number) isEds = reader.int32() === cluster.Cluster_DiscoveryType.EDS;
    else if (field === CLUSTER.edsClusterConfig.number) {
      fields(reader.bytes(), (edsField, edsReader) => {
        if (edsField !== EDS_CONFIG.serviceName.number) return false;
        serviceName = edsReader.string();
        return true;
      });
    } else return false;
    return true;
  });
  return isEds ? { name, eds: serviceName || name } : { name };
}

const ROUTE_CONFIGURATION = route.RouteConfigurationSchema.field;

/** Whether a route configuration has `vhds`: its other virtual hosts come as VHDS VirtualHost resources. */
export function routeUsesVhds(bytes: Uint8Array): boolean {
  let vhds = false;
  fields(bytes, (field, reader) => {
    if (field !== ROUTE_CONFIGURATION.vhds.number) return false;
    reader.bytes();
    vhds = true;
    return true;
  });
  return vhds;
}

export function decodeListener(bytes: Uint8Array): listener.Listener {
  return fromBinary(listener.ListenerSchema, bytes);
}

/** A SotW request's resource_names, encoded as they sit in the request. */
export function encodedResourceNames(names: Iterable<string>): Uint8Array {
  return toBinary(
    discovery.DiscoveryRequestSchema,
    create(discovery.DiscoveryRequestSchema, { resourceNames: [...names] }),
  );
}

/**
 * The bytes of a DiscoveryRequest of `fields` naming `names`. A message's encoding is its fields'
 * encodings one after another, so this is what encoding the whole request writes (version_info and
 * node, resource_names, then type_url and response_nonce), while a stream's names, the same at every
 * ACK (~4.5 KB for a scoped sidecar's EDS), are encoded once: encoding them at every ACK was half of
 * what the load process did in an endpoint change, and its collections most of the rest.
 */
export function sotwRequest(
  fields: Pick<
    MessageInitShape<typeof discovery.DiscoveryRequestSchema>,
    "node" | "versionInfo" | "typeUrl" | "responseNonce"
  >,
  names: Uint8Array,
): Uint8Array {
  const schema = discovery.DiscoveryRequestSchema;
  const head = toBinary(schema, create(schema, { node: fields.node, versionInfo: fields.versionInfo }));
  const tail = toBinary(schema, create(schema, { typeUrl: fields.typeUrl, responseNonce: fields.responseNonce }));
  return Buffer.concat([head, names, tail]);
}
