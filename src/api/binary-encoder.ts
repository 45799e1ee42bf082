// A protobuf binary encoder for protobuf-es v2 messages that writes exactly the bytes `toBinary`
// writes, faster. Per message type it generates (once, on first use) two plain functions: one that
// computes the encoded size, one that writes into a buffer of exactly that size (no growth, no
// shifting of length prefixes, no final copy). Generated code is used instead of per-field closures
// because each property read then has its own inline cache: closures made from one function literal
// share one, which every field of every message type turns megamorphic.
//
// The size pass records the size of every length-delimited part (message, packed list, map entry)
// in the order the write pass reaches them, so nothing is sized twice; the write pass reads them back.
//
// Representation rules mirrored from protobuf-es (to-binary.js, reflect/message.js): fields in number
// order, oneof members at their own number; proto3 implicit presence skips zero values (-0 and NaN
// are written); explicit presence scalars are written when an own property is not undefined (proto2
// defaults live on the prototype), message fields when not undefined or null; singular wrapper
// fields outside oneofs hold the bare value; google.protobuf.Struct fields (except in
// google.protobuf.Value) hold a JsonObject; map entries always write key and value; `$unknown` goes
// last (extensions are among them). Unlike toBinary, a field whose property is missing (a plain
// object written with `$typeName`) is unset, where toBinary throws on some such fields and writes
// "undefined" for a missing string; and a value of the wrong JavaScript type is an error naming the
// field, where toBinary coerces some (a numeric string in an int32 field).
//
// A message must not change while it is encoded (nothing here calls out to code that could).
import { type DescField, type DescMessage, type MessageShape, protoInt64, ScalarType } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { FeatureSet_FieldPresence, isWrapperDesc } from "@bufbuild/protobuf/wkt";

/** The generated encoding functions of one message type. */
interface Codec {
  /**
   * The size of the message's fields. Pushes its own size onto `sizes`, then (in write order) the
   * sizes of its length-delimited parts.
   */
  size(message: unknown, sizes: number[]): number;
  write(message: unknown, w: Writer): void;
}

const FLOAT32_MAX = 3.4028234663852886e38;

/** Writes into a buffer of exactly the size the size pass computed. */
class Writer {
  /** The buffer written, from `start` to `end`. */
  readonly buf: Buffer;
  readonly start: number;
  readonly end: number;
  pos: number;
  /** The sizes the size pass recorded, and the next one to read (the first is the message's own). */
  readonly sizes: readonly number[];
  next = 1;
  #view: DataView | undefined;

  constructor(buf: Buffer, sizes: readonly number[], start = 0, end = buf.length) {
    this.buf = buf;
    this.sizes = sizes;
    this.start = start;
    this.end = end;
    this.pos = start;
  }

  /** The length prefix of the next length-delimited part. */
  delimit(): void {
    this.varint32(this.sizes[this.next++]);
  }

  /** Skips the recorded size of a group-encoded message, which has no length prefix. */
  skipSize(): void {
    this.next++;
  }

  varint32(n: number): void {
    const buf = this.buf;
    while (n > 0x7f) {
      buf[this.pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    buf[this.pos++] = n;
  }

  /** A 64-bit varint from its unsigned 32-bit halves. */
  varint64(lo: number, hi: number): void {
    const buf = this.buf;
    while (hi !== 0 || lo > 0x7f) {
      buf[this.pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    buf[this.pos++] = lo;
  }

  int32(n: number): void {
    if (n >= 0) this.varint32(n);
    else this.varint64(n >>> 0, 0xffffffff);
  }

  sint32(n: number): void {
    this.varint32(((n << 1) ^ (n >> 31)) >>> 0);
  }

  bool(b: boolean): void {
    this.buf[this.pos++] = b ? 1 : 0;
  }

  int64(v: Int64): void {
    if (typeof v === "bigint" && v >= 0n && v <= 0x7fffffffn) this.varint32(Number(v));
    else this.varint64(int64Lo(v, false) >>> 0, int64Hi >>> 0);
  }

  uint64(v: Int64): void {
    if (typeof v === "bigint" && v >= 0n && v <= 0x7fffffffn) this.varint32(Number(v));
    else this.varint64(int64Lo(v, true) >>> 0, int64Hi >>> 0);
  }

  sint64(v: Int64): void {
    const lo = int64Lo(v, false);
    const sign = int64Hi >> 31;
    this.varint64(((lo << 1) ^ sign) >>> 0, (((int64Hi << 1) | (lo >>> 31)) ^ sign) >>> 0);
  }

  fixed64(v: Int64, unsigned: boolean): void {
    const lo = int64Lo(v, unsigned);
    this.view().setInt32(this.pos, lo, true);
    this.view().setInt32(this.pos + 4, int64Hi, true);
    this.pos += 8;
  }

  fixed32(n: number): void {
    this.view().setUint32(this.pos, n, true);
    this.pos += 4;
  }

  sfixed32(n: number): void {
    this.view().setInt32(this.pos, n, true);
    this.pos += 4;
  }

  float(n: number): void {
    this.view().setFloat32(this.pos, n, true);
    this.pos += 4;
  }

  double(n: number): void {
    this.view().setFloat64(this.pos, n, true);
    this.pos += 8;
  }

  /** A length-prefixed string: short ASCII strings by a loop, others by Node's encoders. */
  string(s: string): void {
    const len = s.length;
    const buf = this.buf;
    if (len < SHORT_STRING) {
      let p = this.pos + 1;
      let i = 0;
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) break;
        buf[p++] = c;
      }
      if (i === len) {
        buf[this.pos] = len;
        this.pos = p;
        return;
      }
    }
    // UTF-8 takes 1 to 3 bytes per UTF-16 unit: when both bounds have one prefix size, the string
    // is written after a prefix of that size, which is then filled in (one native call, not two).
    const prefix = varintSize(len);
    if (prefix === varintSize(3 * len)) {
      const start = this.pos;
      this.pos += prefix;
      const size = buf.write(s, this.pos, this.end - this.pos);
      this.pos += size;
      this.varint32At(start, size);
      return;
    }
    const size = Buffer.byteLength(s, "utf8");
    this.varint32(size);
    this.pos += buf.write(s, this.pos, size, size === len ? "latin1" : "utf8");
  }

  /** Writes the varint `n` at `at`, over bytes reserved for it. */
  private varint32At(at: number, n: number): void {
    const buf = this.buf;
    while (n > 0x7f) {
      buf[at++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    buf[at] = n;
  }

  bytes(b: Uint8Array): void {
    this.varint32(b.byteLength);
    this.raw(b);
  }

  raw(b: Uint8Array): void {
    const len = b.byteLength;
    // A loop beats TypedArray#set on the short byte strings that are most of them.
    if (len < 64) {
      const buf = this.buf;
      for (let i = 0; i < len; i++) buf[this.pos++] = b[i];
    } else {
      this.buf.set(b, this.pos);
      this.pos += len;
    }
  }

  unknown(fields: readonly UnknownField[]): void {
    for (const f of fields) {
      this.varint32(((f.no << 3) | f.wireType) >>> 0);
      this.raw(f.data);
    }
  }

  private view(): DataView {
    this.#view ??= new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    return this.#view;
  }
}

type Int64 = bigint | string | number;

/**
 * Strings shorter than this are scanned and copied by a loop; longer ones by Node's native UTF-8
 * length and writers, faster on them (generated names are mostly V8 cons strings, slow to index).
 */
const SHORT_STRING = 16;

interface UnknownField {
  no: number;
  wireType: WireType;
  data: Uint8Array;
}

// The high half of the last int64Lo conversion: a pair without allocating one.
let int64Hi = 0;

/** The low 32 bits of a 64-bit integer (validated as protobuf-es does); the high ones in int64Hi. */
function int64Lo(v: Int64, unsigned: boolean): number {
  const bits = unsigned ? protoInt64.uEnc(v) : protoInt64.enc(v);
  int64Hi = bits.hi;
  return bits.lo;
}

function varintSize(n: number): number {
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  if (n < 0x10000000) return 4;
  return 5;
}

function varint64Size(lo: number, hi: number): number {
  return hi === 0 ? varintSize(lo >>> 0) : Math.ceil((64 - Math.clz32(hi)) / 7);
}

function invalid(field: string, what: string, value: unknown): Error {
  return new Error(`cannot encode field ${field} to binary: invalid ${what}: ${String(value)}`);
}

/** Sizes of values (without their tag), validating what toBinary validates. Called by generated code. */
const sizes = {
  int32(n: number, field: string): number {
    if ((n | 0) !== n) throw invalid(field, "int32", n);
    return n >= 0 ? varintSize(n) : 10;
  },
  uint32(n: number, field: string): number {
    if (n >>> 0 !== n) throw invalid(field, "uint32", n);
    return varintSize(n);
  },
  sint32(n: number, field: string): number {
    if ((n | 0) !== n) throw invalid(field, "int32", n);
    return varintSize(((n << 1) ^ (n >> 31)) >>> 0);
  },
  fixed32(n: number, field: string): number {
    if (n >>> 0 !== n) throw invalid(field, "uint32", n);
    return 4;
  },
  sfixed32(n: number, field: string): number {
    if ((n | 0) !== n) throw invalid(field, "int32", n);
    return 4;
  },
  float(n: number, field: string): number {
    if (typeof n !== "number" || (Number.isFinite(n) && (n > FLOAT32_MAX || n < -FLOAT32_MAX))) {
      throw invalid(field, "float32", n);
    }
    return 4;
  },
  double(n: number, field: string): number {
    if (typeof n !== "number") throw invalid(field, "double", n);
    return 8;
  },
  int64(v: Int64, field: string): number {
    if (typeof v === "bigint" && v >= 0n && v <= 0x7fffffffn) return varintSize(Number(v));
    return varint64Size(int64Lo(checked64(v, field, false), false) >>> 0, int64Hi >>> 0);
  },
  uint64(v: Int64, field: string): number {
    if (typeof v === "bigint" && v >= 0n && v <= 0x7fffffffn) return varintSize(Number(v));
    return varint64Size(int64Lo(checked64(v, field, true), true) >>> 0, int64Hi >>> 0);
  },
  sint64(v: Int64, field: string): number {
    const lo = int64Lo(checked64(v, field, false), false);
    const sign = int64Hi >> 31;
    return varint64Size(((lo << 1) ^ sign) >>> 0, (((int64Hi << 1) | (lo >>> 31)) ^ sign) >>> 0);
  },
  fixed64(v: Int64, field: string, unsigned: boolean): number {
    checked64(v, field, unsigned);
    return 8;
  },
  /** Length prefix and UTF-8 bytes. */
  string(s: string, field: string): number {
    if (typeof s !== "string") throw invalid(field, "string", s);
    const len = s.length;
    if (len < SHORT_STRING) {
      let i = 0;
      while (i < len && s.charCodeAt(i) <= 0x7f) i++;
      if (i === len) return 1 + len;
    }
    const size = Buffer.byteLength(s, "utf8");
    return varintSize(size) + size;
  },
  /** Length prefix and bytes. */
  bytes(b: Uint8Array, field: string): number {
    if (!(b instanceof Uint8Array)) throw invalid(field, "bytes", b);
    return varintSize(b.byteLength) + b.byteLength;
  },
  /** A length-delimited part of `size` bytes, with its prefix. */
  delimited(size: number): number {
    return varintSize(size) + size;
  },
  unknown(fields: readonly UnknownField[]): number {
    let size = 0;
    for (const f of fields) size += varintSize(((f.no << 3) | f.wireType) >>> 0) + f.data.byteLength;
    return size;
  },
};

/** A 64-bit value as protobuf-es checks it, with the field named in the error. */
function checked64(v: Int64, field: string, unsigned: boolean): Int64 {
  try {
    return unsigned ? protoInt64.uParse(v) : protoInt64.parse(v);
  } catch {
    throw invalid(field, unsigned ? "uint64" : "int64", v);
  }
}

/** Map keys are object keys (strings); protobuf-es converts them back to the key type. */
const mapKeys = {
  bool: (k: string): boolean | string => (k === "true" ? true : k === "false" ? false : k),
  int32(k: string): number | string {
    const n = Number.parseInt(k, 10);
    return Number.isFinite(n) ? n : k;
  },
  int64(k: string): Int64 {
    try {
      return protoInt64.parse(k);
    } catch {
      return k;
    }
  },
  uint64(k: string): Int64 {
    try {
      return protoInt64.uParse(k);
    } catch {
      return k;
    }
  },
};

/** Where preEncoded keeps a message's bytes: a non-enumerable property, which clone() and spreads leave out. */
const ENCODED = Symbol("binary-encoder.encoded");

/** What generated code reaches: the size helpers, map key conversions, and error helpers. */
const helpers = {
  encoded: ENCODED,
  sizes,
  mapKeys,
  hasOwn: (o: object, key: string) => Object.hasOwn(o, key),
  foreign(typeName: string, message: { $typeName?: unknown }): never {
    throw new Error(`cannot encode ${String(message?.$typeName)} as ${typeName}`);
  },
  required(field: string): never {
    throw new Error(`cannot encode field ${field} to binary: required field not set`);
  },
};

/**
 * Encodes `message` now and keeps the bytes on it, so that every message holding it copies them
 * instead of encoding it again: for sub-messages shared by identity between many resources (a
 * cluster's metadata-exchange filter, its plaintext socket match). The message must never change
 * afterwards. A Struct field's JSON object is passed without a schema.
 */
export function preEncoded<T extends object>(schema: DescMessage | "google.protobuf.Struct", message: T): T {
  const codec = schema === "google.protobuf.Struct" ? jsonStructCodec : codecFor(schema);
  recordedSizes.length = 0;
  const w = new Writer(Buffer.allocUnsafe(codec.size(message, recordedSizes)), recordedSizes);
  codec.write(message, w);
  Object.defineProperty(message, ENCODED, { value: new Uint8Array(finished(w)), enumerable: false });
  return message;
}

// ---------------------------------------------------------------------------------------------
// Code generation

/** How one scalar type is sized (expression) and written (statement), and its wire type. */
interface ScalarCode {
  wireType: WireType;
  size(v: string, field: string): string;
  write(v: string): string;
}

function scalarCode(type: ScalarType): ScalarCode {
  const sized = (helper: string, wireType: WireType, write: (v: string) => string, extra = ""): ScalarCode => ({
    wireType,
    size: (v, field) => `h.sizes.${helper}(${v}, ${field}${extra})`,
    write,
  });
  switch (type) {
    case ScalarType.INT32:
      return sized("int32", WireType.Varint, (v) => `w.int32(${v});`);
    case ScalarType.UINT32:
      return sized("uint32", WireType.Varint, (v) => `w.varint32(${v});`);
    case ScalarType.SINT32:
      return sized("sint32", WireType.Varint, (v) => `w.sint32(${v});`);
    case ScalarType.FIXED32:
      return sized("fixed32", WireType.Bit32, (v) => `w.fixed32(${v});`);
    case ScalarType.SFIXED32:
      return sized("sfixed32", WireType.Bit32, (v) => `w.sfixed32(${v});`);
    case ScalarType.FLOAT:
      return sized("float", WireType.Bit32, (v) => `w.float(${v});`);
    case ScalarType.DOUBLE:
      return sized("double", WireType.Bit64, (v) => `w.double(${v});`);
    case ScalarType.INT64:
      return sized("int64", WireType.Varint, (v) => `w.int64(${v});`);
    case ScalarType.UINT64:
      return sized("uint64", WireType.Varint, (v) => `w.uint64(${v});`);
    case ScalarType.SINT64:
      return sized("sint64", WireType.Varint, (v) => `w.sint64(${v});`);
    case ScalarType.FIXED64:
      return sized("fixed64", WireType.Bit64, (v) => `w.fixed64(${v}, true);`, ", true");
    case ScalarType.SFIXED64:
      return sized("fixed64", WireType.Bit64, (v) => `w.fixed64(${v}, false);`, ", false");
    case ScalarType.BOOL:
      return { wireType: WireType.Varint, size: () => "1", write: (v) => `w.bool(${v});` };
    case ScalarType.STRING:
      return sized("string", WireType.LengthDelimited, (v) => `w.string(${v});`);
    case ScalarType.BYTES:
      return sized("bytes", WireType.LengthDelimited, (v) => `w.bytes(${v});`);
  }
}

/** The condition under which toBinary writes an implicit-presence scalar `v` (not its zero value). */
function nonZero(field: DescField & { fieldKind: "scalar" | "enum" }, v: string): string {
  if (field.fieldKind === "enum") return `${v} !== ${field.enum.values[0].number}`;
  switch (field.scalar) {
    case ScalarType.BOOL:
      return `${v} !== false`;
    case ScalarType.STRING:
      return `${v} !== ""`;
    case ScalarType.BYTES:
      return `(!(${v} instanceof Uint8Array) || ${v}.byteLength > 0)`;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      // Object.is(v, 0): -0 is written.
      return `(${v} !== 0 || 1 / ${v} < 0)`;
    default:
      // Loose: 0, 0n and "0" are zero, as in toBinary.
      return `${v} != 0`;
  }
}

function tagOf(no: number, wireType: WireType): number {
  return ((no << 3) | wireType) >>> 0;
}

/** A message value's encoding: its codec's name in the generated code, and whether it is a group. */
interface MessageRef {
  codec: string;
  delimited: boolean;
}

/** Generated size/write code of one field's value `v` (tag included), as statements. */
interface Code {
  size: string;
  write: string;
}

/** The generated code of one message type, and the codecs it calls. */
class MessageSource {
  readonly refs: Codec[] = [];
  readonly #refNames = new Map<Codec, string>();

  /** The name under which the generated code calls `codec`. */
  ref(codec: Codec): string {
    let name = this.#refNames.get(codec);
    if (name === undefined) {
      name = `c${this.refs.length}`;
      this.refs.push(codec);
      this.#refNames.set(codec, name);
    }
    return name;
  }

  /** A message value `v` with its tag: length-prefixed, or a group between start and end tags. */
  message(no: number, ref: MessageRef, v: string): Code {
    if (ref.delimited) {
      const start = tagOf(no, WireType.StartGroup);
      const end = tagOf(no, WireType.EndGroup);
      return {
        size: `n += ${varintSize(start) + varintSize(end)} + ${ref.codec}.size(${v}, s);`,
        write: `w.varint32(${start}); w.skipSize(); ${ref.codec}.write(${v}, w); w.varint32(${end});`,
      };
    }
    // A pre-encoded value (preEncoded) is copied; its parts are neither sized nor recorded.
    const tag = tagOf(no, WireType.LengthDelimited);
    return {
      size: `x = ${v}; b = x[E]; n += ${varintSize(tag)} + h.sizes.delimited(b !== undefined ? b.length : ${ref.codec}.size(x, s));`,
      write: `w.varint32(${tag}); x = ${v}; b = x[E]; if (b !== undefined) w.bytes(b); else { w.delimit(); ${ref.codec}.write(x, w); }`,
    };
  }

  /** An empty message with its tag, for a message value that is not there. */
  emptyMessage(no: number, ref: MessageRef): Code {
    if (ref.delimited) {
      const start = tagOf(no, WireType.StartGroup);
      const end = tagOf(no, WireType.EndGroup);
      return {
        size: `n += ${varintSize(start) + varintSize(end)};`,
        write: `w.varint32(${start}); w.varint32(${end});`,
      };
    }
    const tag = tagOf(no, WireType.LengthDelimited);
    return { size: `n += ${varintSize(tag) + 1};`, write: `w.varint32(${tag}); w.varint32(0);` };
  }

  scalar(no: number, type: ScalarType, v: string, field: string): Code {
    const code = scalarCode(type);
    const tag = tagOf(no, code.wireType);
    return {
      size: `n += ${varintSize(tag)} + ${code.size(v, field)};`,
      write: `w.varint32(${tag}); ${code.write(v)}`,
    };
  }

  /** The codec of a message-typed field's values, as protobuf-es represents them in that field. */
  messageRef(field: DescField & { message: DescMessage }): MessageRef {
    const json =
      field.message.typeName === "google.protobuf.Struct" && field.parent.typeName !== "google.protobuf.Value";
    const codec = json ? jsonStructCodec : codecFor(field.message);
    return { codec: this.ref(codec), delimited: field.fieldKind !== "map" && field.delimitedEncoding };
  }
}

/** Generated code of one field, reading the message `m` into `v`. */
function fieldCode(src: MessageSource, field: DescField, get: string): Code {
  const name = JSON.stringify(`${field.parent.typeName}.${field.name}`);
  const no = field.number;
  const wrap = (condition: string, code: Code): Code => ({
    size: `v = ${get};\nif (${condition}) { ${code.size} }`,
    write: `v = ${get};\nif (${condition}) { ${code.write} }`,
  });
  switch (field.fieldKind) {
    case "scalar":
    case "enum": {
      const type = field.fieldKind === "enum" ? ScalarType.INT32 : field.scalar;
      const code = src.scalar(no, type, "v", name);
      if (field.oneof) return oneofCase(field, code);
      if (field.presence === FeatureSet_FieldPresence.IMPLICIT)
        return wrap(`v !== undefined && ${nonZero(field, "v")}`, code);
      return explicit(field, get, code, name);
    }
    case "message": {
      if (!field.oneof && isWrapperDesc(field.message)) return explicit(field, get, unboxedWrapper(field), name);
      const ref = src.messageRef(field);
      const code = src.message(no, ref, "v");
      if (field.oneof) return oneofCase(field, code, src.emptyMessage(no, ref));
      return explicit(field, get, code, name);
    }
    case "list": {
      if (field.listKind === "message") {
        const item = src.message(no, src.messageRef(field), "v[i]");
        return wrap("v !== undefined", {
          size: `for (let i = 0; i < v.length; i++) { ${item.size} }`,
          write: `for (let i = 0; i < v.length; i++) { ${item.write} }`,
        });
      }
      const type = field.listKind === "enum" ? ScalarType.INT32 : field.scalar;
      if (!field.packed) {
        const item = src.scalar(no, type, "v[i]", name);
        return wrap("v !== undefined", {
          size: `for (let i = 0; i < v.length; i++) { ${item.size} }`,
          write: `for (let i = 0; i < v.length; i++) { ${item.write} }`,
        });
      }
      const item = scalarCode(type);
      const tag = tagOf(no, WireType.LengthDelimited);
      // The packed payload's size is recorded for the write pass.
      return wrap("v !== undefined && v.length !== 0", {
        size: `let p = 0; for (let i = 0; i < v.length; i++) p += ${item.size("v[i]", name)}; s.push(p); n += ${varintSize(tag)} + h.sizes.delimited(p);`,
        write: `w.varint32(${tag}); w.delimit(); for (let i = 0; i < v.length; i++) { ${item.write("v[i]")} }`,
      });
    }
    case "map": {
      const tag = tagOf(no, WireType.LengthDelimited);
      const key = scalarCode(field.mapKey);
      const keyTag = tagOf(1, key.wireType);
      const toKey = mapKeyConversion(field.mapKey, "k");
      const value =
        field.mapKind === "message"
          ? src.message(2, src.messageRef(field), "v[k]")
          : src.scalar(2, field.mapKind === "enum" ? ScalarType.INT32 : field.scalar, "v[k]", name);
      // Each entry's size is recorded before its value's own sizes: the write pass meets it first.
      // While the entry is sized, `n` (which the value's code adds to) holds the entry's size.
      return wrap(`v !== undefined`, {
        size: `for (const k of Object.keys(v)) {
  const e = s.length; s.push(0);
  const key = ${toKey};
  const outer = n;
  n = ${varintSize(keyTag)} + ${key.size("key", name)};
  ${value.size}
  s[e] = n;
  n = outer + ${varintSize(tag)} + h.sizes.delimited(s[e]);
}`,
        write: `for (const k of Object.keys(v)) {
  w.varint32(${tag}); w.delimit();
  const key = ${toKey};
  w.varint32(${keyTag}); ${key.write("key")}
  ${value.write}
}`,
      });
    }
  }
}

/** The map key of object key `k` (a string), converted back to the key type as protobuf-es does. */
function mapKeyConversion(type: ScalarType, k: string): string {
  switch (type) {
    case ScalarType.STRING:
      return k;
    case ScalarType.BOOL:
      return `h.mapKeys.bool(${k})`;
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return `h.mapKeys.uint64(${k})`;
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return `h.mapKeys.int64(${k})`;
    default:
      return `h.mapKeys.int32(${k})`;
  }
}

/**
 * A singular wrapper field (google.protobuf.UInt32Value, ...), which protobuf-es holds unboxed: the
 * wrapper message around its one field, sized again when written rather than recorded.
 */
function unboxedWrapper(field: DescField & { message: DescMessage }): Code {
  const inner = field.message.fields[0] as DescField & { fieldKind: "scalar" };
  const code = scalarCode(inner.scalar);
  const innerTag = tagOf(1, code.wireType);
  const name = JSON.stringify(`${inner.parent.typeName}.${inner.name}`);
  const innerSize = `(${nonZero(inner, "v")} ? ${varintSize(innerTag)} + ${code.size("v", name)} : 0)`;
  const tag = tagOf(field.number, WireType.LengthDelimited);
  return {
    size: `n += ${varintSize(tag)} + h.sizes.delimited(${innerSize});`,
    write: `w.varint32(${tag}); l = ${innerSize}; w.varint32(l); if (l !== 0) { w.varint32(${innerTag}); ${code.write("v")} }`,
  };
}

/**
 * A field with explicit presence: a scalar is set when it is an own property and not undefined
 * (proto2 defaults live on the prototype), a message when it is not undefined or null.
 */
function explicit(field: DescField, get: string, code: Code, name: string): Code {
  const local = JSON.stringify(field.localName);
  const set = field.fieldKind === "message" ? `v != null` : `v !== undefined && h.hasOwn(m, ${local})`;
  const unset = field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED ? ` else h.required(${name});` : "";
  return {
    size: `v = ${get};\nif (${set}) { ${code.size} }${unset}`,
    write: `v = ${get};\nif (${set}) { ${code.write} }`,
  };
}

/** A oneof member: written, zero or not, when it is the oneof's case. */
function oneofCase(field: DescField, code: Code, empty?: Code): Code {
  const oneof = `m[${JSON.stringify(field.oneof!.localName)}]`;
  const condition = `v !== undefined && v.case === ${JSON.stringify(field.localName)}`;
  // A message case without a value is an empty message, as toBinary creates one.
  const size = empty ? `if (v == null) { ${empty.size} } else { ${code.size} }` : code.size;
  const write = empty ? `if (v == null) { ${empty.write} } else { ${code.write} }` : code.write;
  return {
    size: `v = ${oneof};\nif (${condition}) { v = v.value; ${size} }`,
    write: `v = ${oneof};\nif (${condition}) { v = v.value; ${write} }`,
  };
}

/** Builds the size and write functions from generated statements. */
function build(src: MessageSource, size: string, write: string, typeName: string): Codec {
  const refs = src.refs.map((_, i) => `const c${i} = refs[${i}];`).join("\n");
  // Named after the type, for profiles.
  const name = typeName.replace(/[^A-Za-z0-9]/g, "_");
  const body = `"use strict";
const E = h.encoded;
${refs}
function size_${name}(m, s) {
${size}
}
function write_${name}(m, w) {
${write}
}
return { size: size_${name}, write: write_${name} };`;
  return new Function("h", "refs", body)(helpers, src.refs) as Codec;
}

/** The size and write functions of a message type's fields. */
function compileMessage(desc: DescMessage): Codec {
  const src = new MessageSource();
  const fields = desc.fields.concat().sort((a, b) => a.number - b.number);
  const code = fields.map((f) => fieldCode(src, f, `m[${JSON.stringify(f.localName)}]`));
  const typeName = JSON.stringify(desc.typeName);
  const check = fields.length > 0 ? `if (m.$typeName !== ${typeName}) h.foreign(${typeName}, m);` : "";
  return build(
    src,
    `${check}
const slot = s.length; s.push(0);
let n = 0, v, x, b;
${code.map((c) => c.size).join("\n")}
v = m.$unknown;
if (v !== undefined) n += h.sizes.unknown(v);
s[slot] = n;
return n;`,
    `let v, l, x, b;
${code.map((c) => c.write).join("\n")}
v = m.$unknown;
if (v !== undefined) w.unknown(v);`,
    desc.typeName,
  );
}

/** A codec compiled on first use, so that a schema's unused branches cost nothing. */
function lazyCodec(compile: () => Codec): Codec {
  const codec: Codec = {
    size(message, s) {
      const compiled = compile();
      codec.size = compiled.size;
      codec.write = compiled.write;
      return compiled.size(message, s);
    },
    write() {
      throw new Error("binary-encoder: write before size");
    },
  };
  return codec;
}

const messageCodecs = new WeakMap<DescMessage, Codec>();

function codecFor(desc: DescMessage): Codec {
  let codec = messageCodecs.get(desc);
  if (codec === undefined) {
    codec = lazyCodec(() => compileMessage(desc));
    messageCodecs.set(desc, codec);
  }
  return codec;
}

// ---------------------------------------------------------------------------------------------
// google.protobuf.Struct held as JSON, written as toBinary writes the Struct it converts it to.

type Json = unknown;

// Tags of Struct.fields (map<string, Value>), its entries, Value's oneof kind and ListValue.values.
const STRUCT_FIELDS = tagOf(1, WireType.LengthDelimited);
const ENTRY_KEY = tagOf(1, WireType.LengthDelimited);
const ENTRY_VALUE = tagOf(2, WireType.LengthDelimited);
const NULL_VALUE = tagOf(1, WireType.Varint);
const NUMBER_VALUE = tagOf(2, WireType.Bit64);
const STRING_VALUE = tagOf(3, WireType.LengthDelimited);
const BOOL_VALUE = tagOf(4, WireType.Varint);
const STRUCT_VALUE = tagOf(5, WireType.LengthDelimited);
const LIST_VALUE = tagOf(6, WireType.LengthDelimited);
const LIST_VALUES = tagOf(1, WireType.LengthDelimited);

function isJsonObject(json: Json): json is Record<string, Json> {
  return json !== null && typeof json === "object" && !Array.isArray(json);
}

function structSize(json: Json, s: number[]): number {
  const slot = s.length;
  s.push(0);
  let n = 0;
  if (isJsonObject(json)) {
    for (const key of Object.keys(json)) {
      const entrySlot = s.length;
      s.push(0);
      const entry =
        1 + sizes.string(key, "google.protobuf.Struct.fields") + 1 + sizes.delimited(valueSize(json[key], s));
      s[entrySlot] = entry;
      n += 1 + sizes.delimited(entry);
    }
  }
  s[slot] = n;
  return n;
}

function writeStruct(json: Json, w: Writer): void {
  if (!isJsonObject(json)) return;
  for (const key of Object.keys(json)) {
    w.varint32(STRUCT_FIELDS);
    w.delimit();
    w.varint32(ENTRY_KEY);
    w.string(key);
    w.varint32(ENTRY_VALUE);
    w.delimit();
    writeValue(json[key], w);
  }
}

/** The size of the google.protobuf.Value protobuf-es converts `json` to. */
function valueSize(json: Json, s: number[]): number {
  const slot = s.length;
  s.push(0);
  let n = 0;
  switch (typeof json) {
    case "number":
      n = 9;
      break;
    case "string":
      n = 1 + sizes.string(json, "google.protobuf.Value.string_value");
      break;
    case "boolean":
      n = 2;
      break;
    case "object":
      if (json === null) n = 2;
      else if (Array.isArray(json)) {
        const listSlot = s.length;
        s.push(0);
        let list = 0;
        for (const item of json) list += 1 + sizes.delimited(valueSize(item, s));
        s[listSlot] = list;
        n = 1 + sizes.delimited(list);
      } else n = 1 + sizes.delimited(structSize(json, s));
      break;
  }
  s[slot] = n;
  return n;
}

function writeValue(json: Json, w: Writer): void {
  switch (typeof json) {
    case "number":
      w.varint32(NUMBER_VALUE);
      w.double(json);
      break;
    case "string":
      w.varint32(STRING_VALUE);
      w.string(json);
      break;
    case "boolean":
      w.varint32(BOOL_VALUE);
      w.bool(json);
      break;
    case "object":
      if (json === null) {
        w.varint32(NULL_VALUE);
        w.varint32(0);
      } else if (Array.isArray(json)) {
        w.varint32(LIST_VALUE);
        w.delimit();
        for (const item of json) {
          w.varint32(LIST_VALUES);
          w.delimit();
          writeValue(item, w);
        }
      } else {
        w.varint32(STRUCT_VALUE);
        w.delimit();
        writeStruct(json, w);
      }
      break;
  }
}

const jsonStructCodec: Codec = {
  size: structSize,
  write: (json, w) => writeStruct(json, w),
};

// ---------------------------------------------------------------------------------------------
// Entry points

// The size pass's records, reused by every encode (encoding is synchronous and not reentrant).
const recordedSizes: number[] = [];

/** Encodes messages of one schema to exactly the bytes `toBinary(schema, message)` returns. */
export type MessageEncoder<Desc extends DescMessage> = (message: MessageShape<Desc>) => Uint8Array;

const encoders = new WeakMap<DescMessage, MessageEncoder<DescMessage>>();

/** The encoder of a message type, compiled on first use and memoized. */
export function encoderFor<Desc extends DescMessage>(schema: Desc): MessageEncoder<Desc> {
  let encoder = encoders.get(schema);
  if (encoder === undefined) {
    const codec = codecFor(schema);
    encoder = (message) => {
      recordedSizes.length = 0;
      const w = new Writer(Buffer.allocUnsafe(codec.size(message, recordedSizes)), recordedSizes);
      codec.write(message, w);
      // A copy of its own, as toBinary returns: a view would keep the pool's whole slab alive.
      return new Uint8Array(finished(w));
    };
    encoders.set(schema, encoder);
  }
  return encoder as MessageEncoder<Desc>;
}

/** `toBinary(schema, message)`, by the compiled encoder. */
export function encodeMessage<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): Uint8Array {
  return encoderFor(schema)(message);
}

const ANY_TYPE_URL = tagOf(1, WireType.LengthDelimited);
const ANY_VALUE = tagOf(2, WireType.LengthDelimited);

/** Each type URL's encoded Any prefix: the type_url field and the value field's tag. */
const anyPrefixes = new Map<string, Uint8Array>();

function anyPrefix(typeUrl: string): Uint8Array {
  let prefix = anyPrefixes.get(typeUrl);
  if (prefix === undefined) {
    const size = 1 + sizes.string(typeUrl, "google.protobuf.Any.type_url") + 1;
    const w = new Writer(Buffer.allocUnsafe(size), []);
    w.varint32(ANY_TYPE_URL);
    w.string(typeUrl);
    w.varint32(ANY_VALUE);
    prefix = new Uint8Array(w.buf);
    anyPrefixes.set(typeUrl, prefix);
  }
  return prefix;
}

/**
 * Encoded resources are carved from slabs of this size: Node's pool allocates an 8 KiB one every
 * dozen clusters, and the allocation (with the collections it drives) cost about as much as writing
 * them. As with Node's pool, a live resource keeps its whole slab alive.
 */
const SLAB_SIZE = 64 * 1024;
let slab: Buffer | undefined;
let slabUsed = 0;

/** A writer of an encoded resource of `size` bytes: in the current slab, or its own buffer when large. */
function resourceWriter(size: number, sizes: readonly number[]): Writer {
  if (size > SLAB_SIZE >>> 3) return new Writer(Buffer.allocUnsafeSlow(size), sizes);
  if (slab === undefined || slabUsed + size > SLAB_SIZE) {
    slab = Buffer.allocUnsafeSlow(SLAB_SIZE);
    slabUsed = 0;
  }
  const start = slabUsed;
  // 8-byte aligned, as Node's pool.
  slabUsed = (slabUsed + size + 7) & ~7;
  return new Writer(slab, sizes, start, start + size);
}

/**
 * An encoded google.protobuf.Any of `message` under `typeUrl`, written in one buffer. Both fields
 * are always written, an empty value too (toBinary of the Any would leave that out).
 */
export function encodeAny<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
  typeUrl: string,
): Uint8Array {
  const codec = codecFor(schema);
  const prefix = anyPrefix(typeUrl);
  recordedSizes.length = 0;
  const size = codec.size(message, recordedSizes);
  const w = resourceWriter(prefix.length + sizes.delimited(size), recordedSizes);
  w.raw(prefix);
  w.varint32(size);
  codec.write(message, w);
  return finished(w);
}

/** The bytes written: a plain view (not a Buffer: Node's subarray validates and subclasses, at a cost per resource). */
function finished(w: Writer): Uint8Array {
  if (w.pos !== w.end || w.next !== w.sizes.length) {
    const wrote = w.pos - w.start;
    throw new Error(
      `binary-encoder: wrote ${wrote} of ${w.end - w.start} bytes: a message changed while it was encoded`,
    );
  }
  return new Uint8Array(w.buf.buffer, w.buf.byteOffset + w.start, w.end - w.start);
}
