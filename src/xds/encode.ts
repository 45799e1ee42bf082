// Encoding generated resources into xDS responses. Resources are encoded by the schema-compiled
// encoder (api/binary-encoder.ts, the bytes of protobuf-es toBinary) straight into their Any; each
// resource object is encoded once (the encoding is stamped on the object) and responses are assembled
// from the kept bytes: a resource sent to 1,000 proxies is encoded once. A generated list that a
// generator hands to many proxies (the same array object) is encoded once too: its resources and
// versions map are kept with the array, and the response body they make once it has gone to several
// proxies, so each further proxy's response is one copy of the body between its own version, type URL
// and nonce. What is kept per list lives in the memo tables the server is given (the XdsCache's).
// Generators must never change an array after returning it. A resource that cannot be encoded (a value
// out of its field's range) is left out of the list's encoding, named in its `errors`.
import { hash } from "node:crypto";
import type { Message } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import {
  discovery,
  ExactWriter,
  encodeAny,
  encodeMessage,
  forgetScratch,
  type OutgoingResponse,
  PackedMessage,
  registry,
  typeUrl,
  UnwrittenResponse,
} from "../api/index.ts";
import { type MemoStore, type Memos, NO_MEMOS, objectTable, weakTable } from "../util/index.ts";
import type { ResourceError, XdsResource } from "./generator.ts";

export interface EncodedResource {
  name: string;
  /** The resource as an encoded `google.protobuf.Any`. */
  any: Uint8Array;
  /** The generator's version, else a hash of `any`. */
  readonly version: string;
  /** Other names of the resource (delta `aliases`), when it has any. */
  readonly aliases?: readonly string[];
}

interface Encoded {
  any: Uint8Array;
  /** A hash of `any`, computed when a version is first read. */
  hash: string | undefined;
  /** Why the resource cannot be encoded (`any` is then empty); kept, as a resource never changes. */
  error: string | undefined;
  /**
   * The entry of the resource under its name, shared by every list holding it: a workload's cluster
   * list holds the outbound clusters of its namespace's others, 105,000 entries for 2,000 sidecars.
   */
  entry: EncodedEntry | undefined;
}

/** A base class whose constructor returns its argument: a subclass adds its private fields to that object. */
class ReturnsTarget {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the point of the class (see EncodedStamp)
    return target;
  }
}

/**
 * A resource's encoding, kept on the resource object as a private field: for a new resource a hidden
 * class transition, a tenth of the cost of a WeakMap entry, and no ephemeron table for the collector
 * to walk. Private fields are invisible to spreads, clone(), Object.keys and deepEqual. An object that
 * is not extensible (never a generated resource) is kept in a memo table instead.
 */
class EncodedStamp extends ReturnsTarget {
  #encoded: Encoded;

  private constructor(target: Message, encoded: Encoded) {
    super(target);
    this.#encoded = encoded;
  }

  static of(memos: Memos, resource: object): Encoded | undefined {
    return #encoded in resource ? (resource as EncodedStamp).#encoded : memos.weak(ENCODED_FROZEN).get(resource);
  }

  static stamp(memos: Memos, resource: Message, encoded: Encoded): void {
    if (Object.isExtensible(resource)) new EncodedStamp(resource, encoded);
    else memos.weak(ENCODED_FROZEN).set(resource, encoded);
  }
}

const ENCODED_FROZEN = weakTable<object, Encoded>("encode/frozenResources");

function isAny(m: Message): m is Any {
  return m.$typeName === "google.protobuf.Any";
}

/** The encoded Any of a resource message (or Any), or why it cannot be encoded: computed once per object. */
function encoded(memos: Memos, resource: Message): Encoded {
  const hit = EncodedStamp.of(memos, resource);
  if (hit) return hit;
  let entry: Encoded;
  try {
    entry = { any: encodeAnyOf(resource), hash: undefined, error: undefined, entry: undefined };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    entry = { any: new Uint8Array(0), hash: undefined, error, entry: undefined };
  }
  EncodedStamp.stamp(memos, resource, entry);
  return entry;
}

function encodeAnyOf(resource: Message): Uint8Array {
  // Packed by a cache: its encoding, shared rather than copied.
  if (resource instanceof PackedMessage) return resource.any;
  if (isAny(resource)) return encodeMessage(AnySchema, resource);
  const schema = registry.getMessage(resource.$typeName);
  if (!schema) throw new Error(`xds: resource type ${resource.$typeName} is not in the API registry`);
  return encodeAny(schema, resource, typeUrl(schema));
}

function contentHash(e: Encoded): string {
  // The one-shot hash: half the cost of a Hash object per resource.
  e.hash ??= hash("sha256", e.any, "base64url").slice(0, 16);
  return e.hash;
}

/**
 * An encoded resource whose content hash is computed when its version is first read: a response
 * needs none, only the comparisons of what a proxy holds (a push of a list already sent, delta).
 */
class EncodedEntry implements EncodedResource {
  readonly name: string;
  readonly any: Uint8Array;
  readonly #encoded: Encoded;
  readonly #version: string | undefined;

  constructor(name: string, encoded: Encoded, version: string | undefined) {
    this.name = name;
    this.any = encoded.any;
    this.#encoded = encoded;
    this.#version = version;
  }

  get version(): string {
    return this.#version ?? contentHash(this.#encoded);
  }
}

/** An entry with aliases: a class of its own, so the entries of every other type keep one shape. */
class AliasedEntry extends EncodedEntry {
  readonly aliases: readonly string[];

  constructor(name: string, encoded: Encoded, version: string | undefined, aliases: readonly string[]) {
    super(name, encoded, version);
    this.aliases = aliases;
  }
}

function encodedEntry(r: XdsResource, e: Encoded): EncodedResource {
  if (r.aliases && r.aliases.length > 0) return new AliasedEntry(r.name, e, r.version, r.aliases);
  if (r.version !== undefined) return new EncodedEntry(r.name, e, r.version);
  if (e.entry?.name !== r.name) e.entry = new EncodedEntry(r.name, e, undefined);
  return e.entry;
}

/** The tag of a length-delimited field: every field an xDS response or Any is assembled from. */
function tag(field: { number: number }): number {
  return (field.number << 3) | WireType.LengthDelimited;
}

const F = discovery.DiscoveryResponseSchema.field;
const SOTW = {
  versionInfo: tag(F.versionInfo),
  resources: tag(F.resources),
  typeUrl: tag(F.typeUrl),
  nonce: tag(F.nonce),
  controlPlane: tag(F.controlPlane),
};
const DF = discovery.DeltaDiscoveryResponseSchema.field;
const DELTA = {
  systemVersionInfo: tag(DF.systemVersionInfo),
  resources: tag(DF.resources),
  typeUrl: tag(DF.typeUrl),
  nonce: tag(DF.nonce),
  removedResources: tag(DF.removedResources),
  controlPlane: tag(DF.controlPlane),
};
const RF = discovery.ResourceSchema.field;
const RESOURCE = {
  version: tag(RF.version),
  resource: tag(RF.resource),
  name: tag(RF.name),
  aliases: tag(RF.aliases),
};

function varintSize(n: number): number {
  let size = 1;
  for (let rest = n >>> 7; rest > 0; rest >>>= 7) size++;
  return size;
}

/** The size of a length-delimited field (tag, length, `len` bytes of payload). */
function fieldSize(fieldTag: number, len: number): number {
  return varintSize(fieldTag) + varintSize(len) + len;
}

function utf8Size(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

/**
 * A resource, encoded; throws when it cannot be. `memos` keeps the encoding of a resource object that
 * is not extensible (never a generated one); others keep theirs on the object.
 */
export function encodeResource(r: XdsResource, memos: Memos = NO_MEMOS): EncodedResource {
  const e = encoded(memos, r.resource);
  if (e.error !== undefined) throw new Error(`xds: cannot encode ${r.name}: ${e.error}`);
  return encodedEntry(r, e);
}

/** A generated resource list, encoded. Shared by every connection given the same list: never mutate it. */
export interface EncodedResources {
  /** The resources that could be encoded, in the list's order. */
  readonly resources: readonly EncodedResource[];
  /** The resources that could not be, left out of `resources`. */
  readonly errors: readonly ResourceError[];
  /** Each resource's version by name (made on first use). */
  readonly versions: ReadonlyMap<string, string>;
}

class EncodedList implements EncodedResources {
  readonly resources: readonly EncodedResource[];
  readonly errors: readonly ResourceError[];
  #versions: ReadonlyMap<string, string> | undefined;

  constructor(resources: readonly EncodedResource[], errors: readonly ResourceError[]) {
    this.resources = resources;
    this.errors = errors;
  }

  get versions(): ReadonlyMap<string, string> {
    this.#versions ??= new Map(this.resources.map((r) => [r.name, r.version]));
    return this.#versions;
  }
}

const ENCODED_LISTS = weakTable<readonly XdsResource[], EncodedResources>("encode/lists");

/** The encoded form of a generator's resource list, computed once per array object. */
export function encodeResources(memos: Memos, list: readonly XdsResource[]): EncodedResources {
  const encodedLists = memos.weak(ENCODED_LISTS);
  let entry = encodedLists.get(list);
  if (entry === undefined) {
    const resources: EncodedResource[] = [];
    const errors: ResourceError[] = [];
    for (const r of list) {
      const e = encoded(memos, r.resource);
      if (e.error === undefined) resources.push(encodedEntry(r, e));
      else errors.push({ name: r.name, error: e.error });
    }
    entry = new EncodedList(resources, errors);
    encodedLists.set(list, entry);
  }
  return entry;
}

/**
 * How many responses a list makes before its body is kept: the first ones are written resource by
 * resource, the list's KEEP_BODY_FROM-th writes the body that it and every later one copy. Copying
 * saves little CPU over writing (the resources are encoded already) and only pays for a list many
 * proxies are sent; a list of one workload's pods (its inbound clusters and the CDS list around them,
 * its outbound listeners) goes to a few, and keeping theirs held 112 MiB at the end of a 2,000-sidecar
 * sync (1,000 workloads of two pods). Kept bodies hold at most 1/KEEP_BODY_FROM of the bytes sent
 * since the server was last quiet.
 */
export const KEEP_BODY_FROM = 8;

/**
 * The encoded repeated `resources` fields of delta responses, by resource array, once the array has
 * made KEEP_BODY_FROM responses (before that, how many it made). The server drops the bodies once it
 * has stopped writing (forgetResponseBodies), as per-push memos keep the arrays until the next push.
 */
const DELTA_BODIES = weakTable<readonly EncodedResource[], Uint8Array | number>("encode/deltaBodies");

/**
 * A SotW response has no per-proxy field when its nonce names the push and the list (`sotwNonce`):
 * proxies sent the same list in a push get the same bytes, so each further proxy costs only gRPC's
 * framing copy. A list's first responses are unwritten (written when sent, into gRPC's scratch); its
 * KEEP_BODY_FROM-th is written and kept with the key it was written for, the latest per list, and
 * later responses with that key are those bytes. A response for another push copies the kept body
 * (the resources' fields).
 */
interface SotwRecord {
  key: string;
  controlPlane: Uint8Array | undefined;
  /** The responses the list made. */
  responses: number;
  /** Set from the list's KEEP_BODY_FROM-th response on. */
  bytes?: Uint8Array;
  body?: Uint8Array;
}
const SOTW_RESPONSES = weakTable<readonly EncodedResource[], SotwRecord>("encode/sotwResponses");

/** Drops the kept response bodies and the scratch buffer; later responses write theirs again. */
export function forgetResponseBodies(memos: MemoStore): void {
  memos.forget(DELTA_BODIES);
  memos.forget(SOTW_RESPONSES);
  forgetScratch();
}

/** A serial per encoded list, for SotW nonces. */
class ListSerials {
  readonly #serials = new WeakMap<readonly EncodedResource[], number>();
  #last = 0;

  of(resources: readonly EncodedResource[]): number {
    let serial = this.#serials.get(resources);
    if (serial === undefined) {
      serial = ++this.#last;
      this.#serials.set(resources, serial);
    }
    return serial;
  }
}

const LIST_SERIALS = objectTable("encode/listSerials", () => new ListSerials());

/**
 * The nonce of a SotW response carrying `resources` at push `version`: the same for every proxy sent
 * that list in that push, and different for any other content (another push or another list), which
 * is all a nonce must do: tell which response an ACK or NACK answers.
 */
export function sotwNonce(memos: Memos, version: string, resources: readonly EncodedResource[]): string {
  return `${version}/${memos.object(LIST_SERIALS).of(resources)}`;
}

/**
 * Writes the resources' body with `writeEach`, or copies `kept` (the same list's body written
 * before); returns a view of the body as written.
 */
function writeBody(
  w: ExactWriter,
  kept: Uint8Array | undefined,
  resources: readonly EncodedResource[],
  writeEach: (w: ExactWriter, r: EncodedResource) => void,
): Uint8Array {
  const start = w.pos;
  if (kept) w.raw(kept);
  else for (const r of resources) writeEach(w, r);
  return w.buffer.subarray(start, w.pos);
}

function bodySize(
  kept: Uint8Array | undefined,
  resources: readonly EncodedResource[],
  sizeOf: (r: EncodedResource) => number,
): number {
  if (kept) return kept.length;
  let size = 0;
  for (const r of resources) size += sizeOf(r);
  return size;
}

export interface SotwResponse {
  versionInfo: string;
  typeUrl: string;
  nonce: string;
  resources: readonly EncodedResource[];
  /** An encoded envoy.config.core.v3.ControlPlane. */
  controlPlane?: Uint8Array;
}

const sotwResourceSize = (r: EncodedResource) => fieldSize(SOTW.resources, r.any.length);
const writeSotwResource = (w: ExactWriter, r: EncodedResource) => w.bytes(SOTW.resources, r.any);

/** A DiscoveryResponse assembled from already-encoded resources (the same bytes for the same inputs). */
export function encodeSotwResponse(memos: Memos, r: SotwResponse): OutgoingResponse {
  const key = `${r.versionInfo}\n${r.typeUrl}\n${r.nonce}`;
  const sotwResponses = memos.weak(SOTW_RESPONSES);
  const record = sotwResponses.get(r.resources);
  const again = record?.key === key && record.controlPlane === r.controlPlane;
  if (again && record.bytes) return record.bytes;
  const responses = (record?.responses ?? 0) + 1;
  const keptBody = record?.body;
  const versionSize = utf8Size(r.versionInfo);
  const typeUrlSize = utf8Size(r.typeUrl);
  const nonceSize = utf8Size(r.nonce);
  const size =
    fieldSize(SOTW.versionInfo, versionSize) +
    bodySize(keptBody, r.resources, sotwResourceSize) +
    fieldSize(SOTW.typeUrl, typeUrlSize) +
    fieldSize(SOTW.nonce, nonceSize) +
    (r.controlPlane ? fieldSize(SOTW.controlPlane, r.controlPlane.length) : 0);
  const write = (w: ExactWriter): Uint8Array => {
    w.string(SOTW.versionInfo, r.versionInfo, versionSize);
    const body = writeBody(w, keptBody, r.resources, writeSotwResource);
    w.string(SOTW.typeUrl, r.typeUrl, typeUrlSize);
    w.string(SOTW.nonce, r.nonce, nonceSize);
    if (r.controlPlane) w.bytes(SOTW.controlPlane, r.controlPlane);
    return body;
  };
  if (keptBody || responses >= KEEP_BODY_FROM) {
    const w = new ExactWriter(Buffer.allocUnsafe(size), size);
    const body = write(w);
    const bytes = w.finish();
    sotwResponses.set(r.resources, { key, controlPlane: r.controlPlane, responses, bytes, body });
    return bytes;
  }
  sotwResponses.set(r.resources, { key, controlPlane: r.controlPlane, responses });
  return new UnwrittenResponse(size, write);
}

export interface DeltaResponse {
  systemVersionInfo: string;
  typeUrl: string;
  nonce: string;
  resources: readonly EncodedResource[];
  removed: readonly string[];
  controlPlane?: Uint8Array;
}

/** The size of an encoded envoy.service.discovery.v3.Resource: version, resource, name, aliases. */
function deltaEntrySize(r: EncodedResource): number {
  let size =
    fieldSize(RESOURCE.version, utf8Size(r.version)) +
    fieldSize(RESOURCE.resource, r.any.length) +
    fieldSize(RESOURCE.name, utf8Size(r.name));
  if (r.aliases) for (const alias of r.aliases) size += fieldSize(RESOURCE.aliases, utf8Size(alias));
  return size;
}

const deltaResourceSize = (r: EncodedResource) => fieldSize(DELTA.resources, deltaEntrySize(r));

function writeDeltaResource(w: ExactWriter, r: EncodedResource): void {
  w.varint(DELTA.resources);
  w.varint(deltaEntrySize(r));
  w.string(RESOURCE.version, r.version, utf8Size(r.version));
  w.bytes(RESOURCE.resource, r.any);
  w.string(RESOURCE.name, r.name, utf8Size(r.name));
  if (r.aliases) for (const alias of r.aliases) w.string(RESOURCE.aliases, alias, utf8Size(alias));
}

/** The delta body kept for `resources`, written now if this is the list's KEEP_BODY_FROM-th response. */
function keptDeltaBody(memos: Memos, resources: readonly EncodedResource[]): Uint8Array | undefined {
  const deltaBodies = memos.weak(DELTA_BODIES);
  const kept = deltaBodies.get(resources) ?? 0;
  if (typeof kept !== "number") return kept;
  if (kept + 1 < KEEP_BODY_FROM) {
    deltaBodies.set(resources, kept + 1);
    return undefined;
  }
  const size = bodySize(undefined, resources, deltaResourceSize);
  const w = new ExactWriter(Buffer.allocUnsafe(size), size);
  for (const r of resources) writeDeltaResource(w, r);
  const body = w.finish();
  deltaBodies.set(resources, body);
  return body;
}

/** A DeltaDiscoveryResponse assembled from already-encoded resources; its nonce is the connection's own. */
export function encodeDeltaResponse(memos: Memos, r: DeltaResponse): OutgoingResponse {
  const keptBody = keptDeltaBody(memos, r.resources);
  const versionSize = utf8Size(r.systemVersionInfo);
  const typeUrlSize = utf8Size(r.typeUrl);
  const nonceSize = utf8Size(r.nonce);
  const removedSizes = r.removed.map(utf8Size);
  let size =
    fieldSize(DELTA.systemVersionInfo, versionSize) +
    bodySize(keptBody, r.resources, deltaResourceSize) +
    fieldSize(DELTA.typeUrl, typeUrlSize) +
    fieldSize(DELTA.nonce, nonceSize) +
    (r.controlPlane ? fieldSize(DELTA.controlPlane, r.controlPlane.length) : 0);
  for (const removedSize of removedSizes) size += fieldSize(DELTA.removedResources, removedSize);
  return new UnwrittenResponse(size, (w) => {
    w.string(DELTA.systemVersionInfo, r.systemVersionInfo, versionSize);
    writeBody(w, keptBody, r.resources, writeDeltaResource);
    w.string(DELTA.typeUrl, r.typeUrl, typeUrlSize);
    w.string(DELTA.nonce, r.nonce, nonceSize);
    for (const [i, name] of r.removed.entries()) w.string(DELTA.removedResources, name, removedSizes[i]);
    if (r.controlPlane) w.bytes(DELTA.controlPlane, r.controlPlane);
  });
}
