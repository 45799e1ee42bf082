import assert from "node:assert/strict";
import { test } from "node:test";
import {
  create,
  createFileRegistry,
  type DescField,
  type DescMessage,
  type Message,
  type MessageInitShape,
  ScalarType,
  toBinary,
} from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import {
  AnySchema,
  FileDescriptorProtoSchema,
  file_google_protobuf_struct,
  file_google_protobuf_wrappers,
  isWrapperDesc,
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
} from "@bufbuild/protobuf/wkt";
import { benchProxy, template, templateState } from "../../bench/templates.ts";
import { credentialsGateway } from "../../bench/templates-bench.ts";
import {
  buildClusters,
  buildListeners,
  buildLoadAssignment,
  buildRouteConfiguration,
  routeNames,
  XdsCache,
} from "../configgen/index.ts";
import { buildNameTable } from "../xds/generators/nds.ts";
import { buildSecrets } from "../xds/generators/sds.ts";
import { storeSecrets } from "../xds/generators/secrets.ts";
import { encodeAny, encodeMessage, preEncoded } from "./binary-encoder.ts";
import { cluster, listener, registry, route, typeUrl } from "./index.ts";

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

function assertSameBytes(schema: DescMessage, message: Message, what: string): void {
  assert.equal(hex(encodeMessage(schema, message)), hex(toBinary(schema, message)), what);
}

function assertSameAsToBinary(message: Message, what: string): void {
  const schema = registry.getMessage(message.$typeName);
  assert.ok(schema, `${message.$typeName} is in the registry`);
  assertSameBytes(schema, message, what);
}

// (1) Every resource the micro benchmarks' templates generate, at a small size.

const TEMPLATES = ["http", "empty", "virtualservice", "tcp", "telemetry-api", "gateways", "knative-gateway"];
const SERVICES = 10;

for (const name of TEMPLATES) {
  test(`${name}: CDS, LDS, RDS, EDS and NDS resources encode as toBinary does`, () => {
    const t = template(name);
    const state = templateState(t.render({ services: SERVICES, instances: SERVICES }));
    const proxy = benchProxy(t.proxy);
    const cache = new XdsCache();
    const clusters = buildClusters(state.push, proxy, state.registry, cache);
    const listeners = buildListeners(state.push, proxy, state.registry, cache);
    const routes = routeNames(listeners).flatMap((r) => buildRouteConfiguration(state.push, proxy, r, cache) ?? []);
    const edsNames = clusters.filter((c) => c.edsClusterConfig).map((c) => c.name);
    const assignments = edsNames.map((c) => buildLoadAssignment(state.push, proxy, state.registry, c, cache));
    const nameTable = buildNameTable(state.push, proxy, state.registry);
    const resources: Message[] = [
      ...clusters,
      ...listeners,
      ...routes,
      ...assignments,
      ...(nameTable ? [nameTable] : []),
    ];
    assert.ok(clusters.length > 0 && listeners.length > 0, "the template generates resources");
    for (const r of resources) assertSameAsToBinary(r, `${name} ${r.$typeName} ${(r as { name?: string }).name ?? ""}`);
  });
}

test("secrets: SDS resources encode as toBinary does", () => {
  const count = 3;
  const gateway = credentialsGateway(count);
  const state = templateState([...template("secrets").render({ services: count, instances: 0 }), gateway]);
  const names = Array.from({ length: count }, (_, i) => `kubernetes://sds-credential-${i}`);
  const secrets = buildSecrets(state.push, benchProxy("router"), storeSecrets(state.store), names);
  assert.equal(secrets.length, count);
  for (const s of secrets) assertSameAsToBinary(s, `secret ${s.name}`);
});

test("encodeAny writes type_url then the message, as toBinary of the packed Any", () => {
  const c = create(cluster.ClusterSchema, { name: "outbound|80||a.default.svc.cluster.local" });
  const any = create(AnySchema, { typeUrl: typeUrl(cluster.ClusterSchema), value: toBinary(cluster.ClusterSchema, c) });
  assert.equal(hex(encodeAny(cluster.ClusterSchema, c, typeUrl(cluster.ClusterSchema))), hex(toBinary(AnySchema, any)));
  // An empty message still gets its (empty) value field.
  const empty = encodeAny(cluster.ClusterSchema, create(cluster.ClusterSchema), "t");
  assert.equal(hex(empty), "0a01741200");
});

// (2) Every field kind, on test schemas built from descriptors.

const f = (
  name: string,
  number: number,
  type: Type,
  extra: Partial<{
    label: Label;
    typeName: string;
    oneofIndex: number;
    proto3Optional: boolean;
    defaultValue: string;
  }> = {},
) => ({ name, number, type, label: Label.OPTIONAL, jsonName: name, ...extra });

const SCALARS: [string, Type][] = [
  ["f_double", Type.DOUBLE],
  ["f_float", Type.FLOAT],
  ["f_int64", Type.INT64],
  ["f_uint64", Type.UINT64],
  ["f_int32", Type.INT32],
  ["f_fixed64", Type.FIXED64],
  ["f_fixed32", Type.FIXED32],
  ["f_bool", Type.BOOL],
  ["f_string", Type.STRING],
  ["f_bytes", Type.BYTES],
  ["f_uint32", Type.UINT32],
  ["f_sfixed32", Type.SFIXED32],
  ["f_sfixed64", Type.SFIXED64],
  ["f_sint32", Type.SINT32],
  ["f_sint64", Type.SINT64],
];

const mapEntry = (name: string, key: Type, value: Type, typeName?: string) => ({
  name,
  field: [f("key", 1, key), f("value", 2, value, typeName ? { typeName } : {})],
  options: { mapEntry: true },
});

const testFile3 = create(FileDescriptorProtoSchema, {
  name: "sluice/test/kinds3.proto",
  package: "sluice.test",
  syntax: "proto3",
  dependency: ["google/protobuf/wrappers.proto", "google/protobuf/struct.proto"],
  enumType: [
    {
      name: "Color",
      value: [
        { name: "COLOR_UNSPECIFIED", number: 0 },
        { name: "RED", number: 1 },
        { name: "NEGATIVE", number: -2 },
      ],
    },
  ],
  messageType: [
    {
      name: "Kinds",
      field: [
        ...SCALARS.map(([name, type], i) => f(name, i + 1, type)),
        ...SCALARS.map(([name, type], i) => f(`r_${name.slice(2)}`, i + 21, type, { label: Label.REPEATED })),
        ...SCALARS.map(([name, type], i) =>
          f(`o_${name.slice(2)}`, i + 41, type, { oneofIndex: i + 1, proto3Optional: true }),
        ),
        f("color", 60, Type.ENUM, { typeName: ".sluice.test.Color" }),
        f("colors", 61, Type.ENUM, { typeName: ".sluice.test.Color", label: Label.REPEATED }),
        f("child", 62, Type.MESSAGE, { typeName: ".sluice.test.Kinds" }),
        f("children", 63, Type.MESSAGE, { typeName: ".sluice.test.Kinds", label: Label.REPEATED }),
        f("choice_string", 64, Type.STRING, { oneofIndex: 0 }),
        f("choice_int32", 70, Type.INT32, { oneofIndex: 0 }),
        f("choice_child", 66, Type.MESSAGE, { typeName: ".sluice.test.Kinds", oneofIndex: 0 }),
        f("choice_wrapper", 67, Type.MESSAGE, { typeName: ".google.protobuf.UInt32Value", oneofIndex: 0 }),
        f("by_string", 80, Type.MESSAGE, { typeName: ".sluice.test.Kinds.ByStringEntry", label: Label.REPEATED }),
        f("by_int64", 81, Type.MESSAGE, { typeName: ".sluice.test.Kinds.ByInt64Entry", label: Label.REPEATED }),
        f("by_bool", 82, Type.MESSAGE, { typeName: ".sluice.test.Kinds.ByBoolEntry", label: Label.REPEATED }),
        f("by_sint32", 83, Type.MESSAGE, { typeName: ".sluice.test.Kinds.BySint32Entry", label: Label.REPEATED }),
        f("by_uint64", 84, Type.MESSAGE, { typeName: ".sluice.test.Kinds.ByUint64Entry", label: Label.REPEATED }),
        f("structs", 85, Type.MESSAGE, { typeName: ".sluice.test.Kinds.StructsEntry", label: Label.REPEATED }),
        f("u32w", 90, Type.MESSAGE, { typeName: ".google.protobuf.UInt32Value" }),
        f("i64w", 91, Type.MESSAGE, { typeName: ".google.protobuf.Int64Value" }),
        f("sw", 92, Type.MESSAGE, { typeName: ".google.protobuf.StringValue" }),
        f("bw", 93, Type.MESSAGE, { typeName: ".google.protobuf.BytesValue" }),
        f("dw", 94, Type.MESSAGE, { typeName: ".google.protobuf.DoubleValue" }),
        f("boolw", 95, Type.MESSAGE, { typeName: ".google.protobuf.BoolValue" }),
        f("wrappers", 96, Type.MESSAGE, { typeName: ".google.protobuf.Int32Value", label: Label.REPEATED }),
        f("meta", 100, Type.MESSAGE, { typeName: ".google.protobuf.Struct" }),
        f("metas", 101, Type.MESSAGE, { typeName: ".google.protobuf.Struct", label: Label.REPEATED }),
        f("value", 102, Type.MESSAGE, { typeName: ".google.protobuf.Value" }),
        f("list", 103, Type.MESSAGE, { typeName: ".google.protobuf.ListValue" }),
        f("big_field", 100000, Type.INT32),
      ],
      nestedType: [
        mapEntry("ByStringEntry", Type.STRING, Type.INT32),
        mapEntry("ByInt64Entry", Type.INT64, Type.MESSAGE, ".sluice.test.Kinds"),
        mapEntry("ByBoolEntry", Type.BOOL, Type.STRING),
        mapEntry("BySint32Entry", Type.SINT32, Type.ENUM, ".sluice.test.Color"),
        mapEntry("ByUint64Entry", Type.UINT64, Type.DOUBLE),
        mapEntry("StructsEntry", Type.STRING, Type.MESSAGE, ".google.protobuf.Struct"),
      ],
      oneofDecl: [{ name: "choice" }, ...SCALARS.map(([name]) => ({ name: `_o_${name.slice(2)}` }))],
    },
  ],
});

const testFile2 = create(FileDescriptorProtoSchema, {
  name: "sluice/test/kinds2.proto",
  package: "sluice.test2",
  syntax: "proto2",
  messageType: [
    {
      name: "Legacy",
      field: [
        f("required_int", 1, Type.INT32, { label: Label.REQUIRED }),
        f("with_default", 2, Type.STRING, { defaultValue: "hello" }),
        f("plain", 3, Type.INT32),
        f("nums", 4, Type.INT32, { label: Label.REPEATED }),
        f("group", 5, Type.GROUP, { typeName: ".sluice.test2.Legacy.Group" }),
      ],
      nestedType: [{ name: "Group", field: [f("x", 6, Type.INT32)] }],
    },
  ],
});

const testRegistry = createFileRegistry(
  createFileRegistry(testFile3, (name) =>
    name === "google/protobuf/wrappers.proto"
      ? file_google_protobuf_wrappers
      : name === "google/protobuf/struct.proto"
        ? file_google_protobuf_struct
        : undefined,
  ),
  createFileRegistry(testFile2, () => undefined),
);
const Kinds = testRegistry.getMessage("sluice.test.Kinds")!;
const Legacy = testRegistry.getMessage("sluice.test2.Legacy")!;

type Init = Record<string, unknown>;
const kinds = (init: Init) => create(Kinds, init as MessageInitShape<typeof Kinds>);

function assertKinds(init: Init, what: string, expectedHex?: string): void {
  const message = kinds(init);
  assertSameBytes(Kinds, message, what);
  if (expectedHex !== undefined) assert.equal(hex(encodeMessage(Kinds, message)), expectedHex, what);
}

test("scalars: zero values skipped, negative int32 as 10 bytes, 64-bit extremes, zigzag, fixed widths", () => {
  assertKinds({}, "empty", "");
  assertKinds({ fInt32: -1 }, "negative int32", "28ffffffffffffffffff01");
  assertKinds({ fInt32: -2147483648, fInt64: -9223372036854775808n }, "minimum int32 and int64");
  assertKinds({ fInt32: 2147483647, fUint32: 4294967295 }, "maximum int32 and uint32");
  assertKinds({ fInt64: 9223372036854775807n, fUint64: 18446744073709551615n }, "maximum int64 and uint64");
  assertKinds({ fInt64: 0x7fffffffn, fUint64: 0x80000000n }, "64-bit values around 2^31");
  assertKinds({ fSint32: -1, fSint64: -1n }, "zigzag -1", "70017801");
  assertKinds({ fSint32: -2147483648, fSint64: -9223372036854775808n }, "zigzag minimum");
  assertKinds({ fSint32: 2147483647, fSint64: 9223372036854775807n }, "zigzag maximum");
  assertKinds({ fFixed32: 4294967295, fSfixed32: -2147483648 }, "fixed32 extremes");
  assertKinds({ fFixed64: 18446744073709551615n, fSfixed64: -9223372036854775808n }, "fixed64 extremes");
  assertKinds({ fDouble: 1.5, fFloat: 0.1, fBool: true }, "double, float, bool");
  assertKinds({ fBytes: new Uint8Array([0, 1, 255]) }, "bytes", "52030001ff");
  assertKinds({ fBytes: new Uint8Array(300).fill(7) }, "long bytes");
  assertKinds({ bigField: 1 }, "a five-byte tag", "80ea3001");
});

test("floats: -0 and NaN are written, +0 is not", () => {
  assertKinds({ fDouble: -0, fFloat: -0 }, "-0", "0900000000000000801500000080");
  assertKinds({ fDouble: Number.NaN, fFloat: Number.NaN }, "NaN");
  assertKinds({ fDouble: Number.POSITIVE_INFINITY, fFloat: Number.NEGATIVE_INFINITY }, "infinities");
  assertKinds({ fDouble: 0, fFloat: 0 }, "+0", "");
});

test("strings: ASCII, non-ASCII, lone surrogates, and long strings", () => {
  assertKinds({ fString: "abc" }, "ASCII", "4a03616263");
  assertKinds({ fString: "ünïcødé ✓ 😀" }, "non-ASCII");
  assertKinds({ fString: "a\ud800b" }, "lone surrogate");
  assertKinds({ fString: "x".repeat(127) }, "127 ASCII");
  assertKinds({ fString: "x".repeat(128) }, "128 ASCII");
  assertKinds({ fString: "é".repeat(70) }, "non-ASCII crossing the one-byte length prefix");
  assertKinds({ fString: "ü".repeat(20000) }, "long non-ASCII");
  assertKinds({ rString: ["", "a", "ü"] }, "repeated strings, an empty one included");
});

test("repeated: packed by default in proto3 (empty lists not written), strings and bytes unpacked", () => {
  assertKinds({ rInt32: [1, -1, 300], rDouble: [1.5, -0], rBool: [true, false] }, "packed");
  assertKinds({ rInt32: [] }, "empty packed list", "");
  assertKinds({ rFixed32: [1, 2], rSfixed64: [-1n], rSint32: [-5], rUint64: [2n ** 63n] }, "packed fixed and varint");
  assertKinds({ rInt32: [1, 2] }, "packed int32 bytes", "ca01020102");
  assertKinds({ rBytes: [new Uint8Array([1]), new Uint8Array(0)] }, "unpacked bytes");
  assertKinds({ colors: [1, -2, 0] }, "packed enums, a negative one included");
});

test("explicit presence: proto3 optional zero values are written", () => {
  assertKinds({ oInt32: 0, oString: "", oBool: false, oDouble: 0, oInt64: 0n }, "optional zeros");
  assertKinds({ oInt32: 0 }, "optional int32 zero", "e80200");
});

test("enums: zero skipped, negative values as 10-byte varints", () => {
  assertKinds({ color: 0 }, "zero enum", "");
  assertKinds({ color: 1 }, "enum");
  assertKinds({ color: -2 }, "negative enum", "e003feffffffffffffffff01");
});

test("messages larger than the scratch buffer, and parts moved up by long length prefixes", () => {
  // Every kind of write past the end of the first buffer: loops, native copies, DataView writes.
  const big = {
    fString: "ü".repeat(40_000),
    children: Array.from({ length: 40 }, (_, i) => ({
      fBytes: new Uint8Array(3000).fill(i),
      fDouble: i + 0.5,
      fFixed64: BigInt(i),
      fFloat: 1.5,
      rInt32: [i, -i, 300],
      child: { fString: "x".repeat(100 + i) },
    })),
  };
  assertKinds(big, "over 64 KiB, twice");
  assertKinds({ children: [big, big] }, "over 64 KiB, nested");
  assertKinds({ child: { child: { child: { fString: "y".repeat(20_000) } } } }, "3-byte prefixes at every level");
});

test("messages: nested, repeated, recursive, empty", () => {
  assertKinds({ child: {} }, "empty child", "f20300");
  assertKinds({ child: { child: { fString: "deep", child: { fInt32: 1 } } } }, "nested");
  assertKinds({ children: [{}, { fInt32: 5 }, { children: [{ fBool: true }] }] }, "repeated");
  assertKinds({ child: { fString: "x".repeat(200), children: [{ fBytes: new Uint8Array(20000) }] } }, "long lengths");
});

test("oneofs: a member is written even at its zero value, at its own field number", () => {
  assertKinds({ choice: { case: "choiceString", value: "" } }, "empty string case", "820400");
  assertKinds({ choice: { case: "choiceInt32", value: 0 }, color: 1 }, "zero int32 case after field 60");
  assertKinds({ choice: { case: "choiceChild", value: { fInt32: 1 } } }, "message case");
  assertKinds({ choice: { case: "choiceWrapper", value: { value: 0 } } }, "wrapper case, boxed");
  const unset = kinds({});
  (unset as unknown as Init).choice = { case: "choiceChild", value: undefined };
  assertSameBytes(Kinds, unset, "message case without a value");
});

test("maps: insertion order, key types, message, enum and Struct values", () => {
  assertKinds({ byString: { b: 1, a: 0, "": 2 } }, "string keys in insertion order");
  assertKinds({ byInt64: { "-5": { fInt32: 1 }, "9223372036854775807": {} } }, "int64 keys, message values");
  assertKinds({ byBool: { true: "yes", false: "" } }, "bool keys");
  assertKinds({ bySint32: { "-3": 1, "7": -2, "0": 0 } }, "sint32 keys, enum values");
  assertKinds({ byUint64: { "18446744073709551615": -0 } }, "uint64 keys, double values");
  assertKinds({ structs: { a: { x: [1, "two", null, true, { y: {} }] }, b: {} } }, "Struct values");
});

test("wrappers: singular fields unboxed, repeated and oneof boxed", () => {
  assertKinds({ u32w: 0 }, "zero UInt32Value is an empty message", "d20500");
  assertKinds({ u32w: 4294967295, i64w: -1n, dw: Number.NaN, boolw: false }, "wrapped values");
  assertKinds({ sw: "", bw: new Uint8Array(0) }, "empty string and bytes wrappers");
  assertKinds({ sw: "ü".repeat(100), bw: new Uint8Array(200) }, "long string and bytes wrappers");
  assertKinds({ wrappers: [{ value: 0 }, { value: -1 }] }, "repeated wrappers");
});

test("Struct fields hold JSON; Value and ListValue fields are messages", () => {
  assertKinds({ meta: {} }, "empty Struct", "a20600");
  assertKinds(
    { meta: { s: "x", n: 1.5, z: 0, b: false, nil: null, l: [[], {}, "ü"], o: { deep: { deeper: [1] } } } },
    "every JSON kind",
  );
  assertKinds({ metas: [{}, { a: 1 }] }, "repeated Structs");
  assertKinds(
    { value: { kind: { case: "structValue", value: { fields: { a: { kind: { case: "numberValue", value: 1 } } } } } } },
    "Value message",
  );
  assertKinds({ list: { values: [{ kind: { case: "nullValue", value: 0 } }, {}] } }, "ListValue message");
});

test("pre-encoded sub-messages and Structs are copied as encoded, wherever they are held", () => {
  const child = preEncoded(Kinds, kinds({ fString: "shared", children: [{ fInt32: 7 }] }));
  const meta = preEncoded("google.protobuf.Struct", { a: [1, "x"], b: { c: true } });
  const holder = kinds({
    child,
    children: [kinds({}), child],
    choice: { case: "choiceChild", value: child },
    meta,
    metas: [meta, {}],
  });
  const fresh = kinds({
    child: kinds({ fString: "shared", children: [{ fInt32: 7 }] }),
    children: [kinds({}), kinds({ fString: "shared", children: [{ fInt32: 7 }] })],
    choice: { case: "choiceChild", value: kinds({ fString: "shared", children: [{ fInt32: 7 }] }) },
    meta: { a: [1, "x"], b: { c: true } },
    metas: [{ a: [1, "x"], b: { c: true } }, {}],
  });
  assert.equal(hex(encodeMessage(Kinds, holder)), hex(toBinary(Kinds, fresh)));
  assertSameBytes(Kinds, holder, "pre-encoded parts");
  // The kept bytes are invisible to spreads and Object.keys, so JSON and copies are unchanged.
  assert.deepEqual(Object.keys(meta), ["a", "b"]);
  assert.deepEqual({ ...meta }, { a: [1, "x"], b: { c: true } });
  // What was encoded is what is copied: a later change (which the contract forbids) does not show.
  (child as unknown as Init).fString = "changed";
  assert.equal(hex(encodeMessage(Kinds, holder)), hex(toBinary(Kinds, fresh)));
});

test("unknown fields are written last, as stored", () => {
  const message = kinds({ fInt32: 1 });
  message.$unknown = [
    { no: 1000, wireType: WireType.Varint, data: new Uint8Array([5]) },
    { no: 3, wireType: WireType.LengthDelimited, data: new Uint8Array([2, 0x61, 0x62]) },
  ];
  assertSameBytes(Kinds, message, "unknown fields");
  assert.equal(hex(encodeMessage(Kinds, message)), "2801c03e051a026162");
});

test("proto2: defaults are unset, required fields are checked, groups are delimited", () => {
  const legacy = create(Legacy, { requiredInt: 0, nums: [1, 2] } as MessageInitShape<typeof Legacy>);
  assertSameBytes(Legacy, legacy, "required zero, unpacked repeated, default string unset");
  assert.equal(hex(encodeMessage(Legacy, legacy)), "080020012002");
  const withGroup = create(Legacy, {
    requiredInt: 1,
    withDefault: "hello",
    plain: 0,
    group: { x: 3 },
  } as MessageInitShape<typeof Legacy>);
  assertSameBytes(Legacy, withGroup, "explicit default value, group");
  assert.throws(() => encodeMessage(Legacy, create(Legacy)), /Legacy.required_int.*required field not set/);
});

test("plain objects: missing fields are unset", () => {
  const plain = { $typeName: "envoy.config.cluster.v3.Cluster", name: "a" } as unknown as cluster.Cluster;
  assert.equal(hex(encodeMessage(cluster.ClusterSchema, plain)), "0a0161");
  const full = { ...create(cluster.ClusterSchema), name: "a" };
  assertSameBytes(cluster.ClusterSchema, full, "a plain copy of a created message");
});

test("bad values are errors naming the field", () => {
  assert.throws(() => assertKinds({ fInt32: 1.5 }, "fraction"), /Kinds\.f_int32.*invalid int32: 1\.5/);
  assert.throws(() => assertKinds({ fUint32: -1 }, "negative"), /Kinds\.f_uint32.*invalid uint32: -1/);
  assert.throws(() => assertKinds({ fInt64: 2n ** 63n }, "overflow"), /Kinds\.f_int64.*invalid int64/);
  assert.throws(() => assertKinds({ fFloat: 1e39 }, "float overflow"), /Kinds\.f_float.*invalid float32/);
  const foreign = kinds({});
  (foreign as unknown as Init).child = create(cluster.ClusterSchema, { name: "c" });
  assert.throws(() => encodeMessage(Kinds, foreign), /envoy.config.cluster.v3.Cluster as sluice.test.Kinds/);
});

// (3) Random messages of a few Envoy schemas.

/** A deterministic PRNG (mulberry32), so a failure reproduces. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomMessages(seed: number) {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const strings = ["", "a", "outbound|80||a.default.svc.cluster.local", "ü✓😀", "x".repeat(130)];

  function scalar(type: ScalarType): unknown {
    switch (type) {
      case ScalarType.DOUBLE:
        return pick([0, -0, 1.5, -1e300, Number.NaN, random()]);
      case ScalarType.FLOAT:
        return pick([0, -0, Math.fround(random()), Number.NaN, 3.4028234663852886e38]);
      case ScalarType.INT32:
      case ScalarType.SINT32:
      case ScalarType.SFIXED32:
        return pick([0, 1, -1, 127, 128, 2147483647, -2147483648, Math.floor(random() * 1e6) - 5e5]);
      case ScalarType.UINT32:
      case ScalarType.FIXED32:
        return pick([0, 1, 127, 128, 16384, 4294967295, Math.floor(random() * 1e9)]);
      case ScalarType.INT64:
      case ScalarType.SINT64:
      case ScalarType.SFIXED64:
        return pick([0n, 1n, -1n, 2n ** 31n, -(2n ** 63n), 2n ** 63n - 1n, BigInt(Math.floor(random() * 1e12))]);
      case ScalarType.UINT64:
      case ScalarType.FIXED64:
        return pick([0n, 1n, 2n ** 31n, 2n ** 32n, 2n ** 64n - 1n, BigInt(Math.floor(random() * 1e12))]);
      case ScalarType.BOOL:
        return random() < 0.5;
      case ScalarType.STRING:
        return pick(strings);
      case ScalarType.BYTES:
        return new Uint8Array(Math.floor(random() * 4) * 40).map(() => random() * 256);
    }
  }

  function json(depth: number): unknown {
    const kind = Math.floor(random() * (depth > 2 ? 4 : 6));
    if (kind === 0) return null;
    if (kind === 1) return random() * 100;
    if (kind === 2) return pick(strings);
    if (kind === 3) return random() < 0.5;
    if (kind === 4) return [json(depth + 1), json(depth + 1)];
    return { a: json(depth + 1), ü: json(depth + 1) };
  }

  function single(field: DescField, depth: number): unknown {
    // Singular wrapper fields outside oneofs hold the bare value.
    if (field.fieldKind === "message" && !field.oneof && isWrapperDesc(field.message)) {
      return scalar(field.message.fields[0].scalar!);
    }
    if (field.message) {
      if (field.message.typeName === "google.protobuf.Struct") return { k: json(0) };
      return message(field.message, depth + 1);
    }
    if (field.enum) return pick(field.enum.values).number;
    return scalar(field.scalar!);
  }

  function message(schema: DescMessage, depth: number): Record<string, unknown> {
    const init: Record<string, unknown> = {};
    if (depth > 3) return init;
    for (const member of schema.members) {
      if (random() > 0.3) continue;
      if (member.kind === "oneof") {
        const field = pick(member.fields);
        init[member.localName] = { case: field.localName, value: single(field, depth) };
        continue;
      }
      const field = member;
      if (field.fieldKind === "list") {
        init[field.localName] = Array.from({ length: Math.floor(random() * 3) }, () => single(field, depth));
      } else if (field.fieldKind === "map") {
        const entries: Record<string, unknown> = {};
        for (let i = 0; i < 2; i++)
          entries[field.mapKey === ScalarType.STRING ? pick(strings) : String(i)] = single(field, depth);
        init[field.localName] = entries;
      } else {
        init[field.localName] = single(field, depth);
      }
    }
    return init;
  }
  return message;
}

for (const schema of [cluster.ClusterSchema, route.RouteConfigurationSchema, listener.ListenerSchema]) {
  test(`random ${schema.name} messages encode as toBinary does`, () => {
    const message = randomMessages(schema.name.length);
    for (let i = 0; i < 60; i++) {
      const m = create(schema, message(schema, 0) as MessageInitShape<typeof schema>);
      assertSameBytes(schema, m, `${schema.name} #${i}`);
    }
  });
}
