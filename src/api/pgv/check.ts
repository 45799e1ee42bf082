// A checker for the protoc-gen-validate (PGV) rules the Envoy API carries in its field options:
// what Envoy enforces when it loads a resource, so Sluice can check what it generates without an
// Envoy binary. Rules are read from the generated descriptors; Any payloads are unpacked through
// the registry and checked too (Envoy validates every typed_config it loads).
import {
  type DescEnum,
  type DescField,
  type DescMessage,
  type DescOneof,
  fromBinary,
  fromJson,
  getOption,
  hasOption,
  type JsonValue,
  type Message,
  type MessageShape,
  type Registry,
  ScalarType,
} from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import {
  type Any,
  type Duration,
  FeatureSet_FieldPresence,
  isWrapperDesc,
  type Timestamp,
} from "@bufbuild/protobuf/wkt";
import {
  type AnyRules,
  type BytesRules,
  type DurationRules,
  disabled,
  type EnumRules,
  type FieldRules,
  file_validate_validate,
  ignored,
  KnownRegex,
  type MapRules,
  type RepeatedRules,
  required,
  rules as rulesOption,
  type StringRules,
  type TimestampRules,
} from "../gen/validate/validate_pb.ts";
import { registry as apiRegistry } from "../index.ts";

/** Any fields whose payload Envoy never unpacks: a Wasm plugin's and VM's configuration. */
const OPAQUE_ANY_FIELDS: ReadonlySet<string> = new Set([
  "envoy.extensions.wasm.v3.PluginConfig.configuration",
  "envoy.extensions.wasm.v3.VmConfig.configuration",
]);

export interface Violation {
  /** Field path from the checked message, e.g. `filter_chains[0].filters[1].typed_config.stat_prefix`. */
  path: string;
  /** The rule broken, e.g. `string.min_len`, `message.required`, `oneof.required`, `any.known_type`. */
  rule: string;
  message: string;
}

export interface CheckOptions {
  /** Resolves Any payloads; defaults to every generated type. */
  registry?: Registry;
  /** The current time for timestamp lt_now/gt_now/within; defaults to the clock. */
  now?: Date;
}

/** Every PGV violation in the message, its nested messages and its Any payloads. */
export function checkMessage<Desc extends DescMessage>(
  schema: Desc,
  message: MessageShape<Desc>,
  options: CheckOptions = {},
): Violation[] {
  const checker = new Checker(options.registry ?? apiRegistry, options.now ?? new Date());
  checker.message(reflect(schema, message), undefined, "");
  return checker.violations;
}

/** Envoy refuses Durations that are negative or longer than 10000 years, whatever the field's rules. */
const MAX_DURATION_SECONDS = 315_576_000_000n;
const NANOS_PER_SECOND = 1_000_000_000n;

const HEADER_NAME = /^:?[0-9a-zA-Z!#$%&'*+-.^_|~`]+$/;
// PGV's header regexes exclude control characters; tested by code point (biome forbids them in regexes).
const someChar = (value: string, bad: (code: number) => boolean) => [...value].some((c) => bad(c.codePointAt(0)!));
const strictHeaderValueChar = (c: number) => c <= 0x08 || (c >= 0x0a && c <= 0x1f) || c === 0x7f;
const looseHeaderChar = (c: number) => c === 0x00 || c === 0x0a || c === 0x0d;
const uriForbiddenChar = (c: number) => c <= 0x20 || c === 0x7f;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

type Num = number | bigint;

// Option lookups decode extension bytes; cache them per descriptor.
const fieldRulesCache = new Map<DescField, FieldRules | undefined>();
function fieldRules(field: DescField): FieldRules | undefined {
  if (!fieldRulesCache.has(field)) {
    fieldRulesCache.set(field, hasOption(field, rulesOption) ? getOption(field, rulesOption) : undefined);
  }
  return fieldRulesCache.get(field);
}

const messageSkipCache = new Map<DescMessage, boolean>();
function messageSkipped(desc: DescMessage): boolean {
  let skipped = messageSkipCache.get(desc);
  if (skipped === undefined) {
    skipped = getOption(desc, disabled) || getOption(desc, ignored);
    messageSkipCache.set(desc, skipped);
  }
  return skipped;
}

const requiredOneofCache = new Map<DescMessage, DescOneof[]>();
function requiredOneofs(desc: DescMessage): DescOneof[] {
  let oneofs = requiredOneofCache.get(desc);
  if (!oneofs) {
    oneofs = desc.oneofs.filter((oneof) => getOption(oneof, required));
    requiredOneofCache.set(desc, oneofs);
  }
  return oneofs;
}

const patternCache = new Map<string, RegExp>();
/** RE2 patterns as JS RegExps: RE2's leading flag group and \A, \z anchors are translated. */
function compilePattern(pattern: string): RegExp {
  let re = patternCache.get(pattern);
  if (!re) {
    const flags = /^\(\?([imsU]+)\)/.exec(pattern);
    const source = pattern
      .slice(flags ? flags[0].length : 0)
      .replaceAll("\\A", "^")
      .replaceAll("\\z", "$");
    const jsFlags = (flags?.[1] ?? "").replace(/[^ims]/g, "");
    try {
      re = new RegExp(source, `${jsFlags}u`);
    } catch {
      re = new RegExp(source, jsFlags);
    }
    patternCache.set(pattern, re);
  }
  return re;
}

const join = (path: string, name: string) => (path ? `${path}.${name}` : name);
const keyPath = (path: string, key: unknown) => `${path}[${typeof key === "string" ? JSON.stringify(key) : key}]`;
const cmp = (a: Num, b: Num) => (a < b ? -1 : a > b ? 1 : 0);
const fmtNum = (n: Num) => String(n);

function durationNanos(d: Duration): bigint {
  return d.seconds * NANOS_PER_SECOND + BigInt(d.nanos);
}
function timestampNanos(t: Timestamp): bigint {
  return t.seconds * NANOS_PER_SECOND + BigInt(t.nanos);
}
function fmtDuration(nanos: Num): string {
  const n = BigInt(nanos);
  const sign = n < 0n ? "-" : "";
  const abs = n < 0n ? -n : n;
  const frac = abs % NANOS_PER_SECOND;
  const fracText = frac === 0n ? "" : `.${frac.toString().padStart(9, "0").replace(/0+$/, "")}`;
  return `${sign}${abs / NANOS_PER_SECOND}${fracText}s`;
}
function fmtTimestamp(nanos: Num): string {
  return new Date(Number(BigInt(nanos) / 1_000_000n)).toISOString();
}

const ruleSchemas = new Map(file_validate_validate.messages.map((m) => [m.typeName, m]));

/** The set fields of a rules message by proto name (proto2: presence matters, a zero bound is still a bound). */
function setRules(rules: Message): Map<string, unknown> {
  const r = reflect(ruleSchemas.get(rules.$typeName)!, rules);
  const out = new Map<string, unknown>();
  for (const field of r.fields) {
    if (r.isSet(field)) out.set(field.name, (rules as unknown as Record<string, unknown>)[field.localName]);
  }
  return out;
}

const NUMERIC_RULES = new Set<FieldRules["type"]["case"]>([
  "float",
  "double",
  "int32",
  "int64",
  "uint32",
  "uint64",
  "sint32",
  "sint64",
  "fixed32",
  "fixed64",
  "sfixed32",
  "sfixed64",
]);

const hasExplicitPresence = (field: DescField) =>
  field.presence !== FeatureSet_FieldPresence.IMPLICIT || field.oneof !== undefined;

function isHostname(host: string): string | undefined {
  const name = host.endsWith(".") ? host.slice(0, -1) : host;
  if (name.length > 253) return "hostname cannot exceed 253 characters";
  for (const part of name.split(".")) {
    if (part.length === 0 || part.length > 63) return "hostname part must be non-empty and cannot exceed 63 characters";
    if (part.startsWith("-")) return "hostname parts cannot begin with hyphens";
    if (part.endsWith("-")) return "hostname parts cannot end with hyphens";
    if (!/^[a-zA-Z0-9-]+$/.test(part))
      return `hostname parts can only contain alphanumeric characters or hyphens, got "${part}"`;
  }
  return undefined;
}

// Dotted quad without leading zeros, as Go's net.ParseIP reads it.
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
function isIPv4(s: string): boolean {
  return IPV4.test(s);
}
function isIPv6(s: string): boolean {
  if (!s.includes(":") || s.includes("%")) return false;
  try {
    return new URL(`http://[${s}]/`).hostname.length > 2;
  } catch {
    return false;
  }
}

class Checker {
  readonly violations: Violation[] = [];

  constructor(
    private readonly registry: Registry,
    private readonly now: Date,
  ) {}

  private add(path: string, rule: string, message: string): void {
    this.violations.push({ path, rule, message });
  }

  /** A message value in a field with `rules` (undefined at the root or without rules). */
  message(msg: ReflectMessage, rules: FieldRules | undefined, path: string): void {
    const typeName = msg.desc.typeName;
    if (typeName === "google.protobuf.Any") {
      const any = msg.message as Any;
      if (rules?.type.case === "any") this.anyRules(any, rules.type.value, path);
      if (!rules?.message?.skip) this.anyPayload(any, path);
      return;
    }
    if (typeName === "google.protobuf.Duration") {
      this.duration(msg.message as Duration, rules?.type.case === "duration" ? rules.type.value : undefined, path);
      return;
    }
    if (typeName === "google.protobuf.Timestamp") {
      if (rules?.type.case === "timestamp") this.timestamp(msg.message as Timestamp, rules.type.value, path);
      return;
    }
    if (isWrapperDesc(msg.desc)) {
      // The rules of a wrapper field are the wrapped scalar's.
      const field = msg.desc.fields[0];
      if (rules) this.scalar(field.scalar, msg.get(field), rules, path);
      return;
    }
    if (rules?.message?.skip || typeName.startsWith("google.protobuf.")) return;
    this.fields(msg, path);
  }

  private fields(msg: ReflectMessage, path: string): void {
    const desc = msg.desc;
    if (messageSkipped(desc)) return;
    for (const oneof of requiredOneofs(desc)) {
      if (!msg.oneofCase(oneof)) {
        this.add(join(path, oneof.name), "oneof.required", "value is required");
      }
    }
    for (const field of desc.fields) {
      if (field.oneof && msg.oneofCase(field.oneof) !== field) continue;
      this.field(msg, field, fieldRules(field), join(path, field.name));
    }
  }

  private field(msg: ReflectMessage, field: DescField, rules: FieldRules | undefined, path: string): void {
    switch (field.fieldKind) {
      case "scalar":
        // A field with explicit presence (proto2, proto3 optional) is checked only when set.
        if (rules && (!hasExplicitPresence(field) || msg.isSet(field)))
          this.scalar(field.scalar, msg.get(field), rules, path);
        return;
      case "enum":
        if (rules?.type.case === "enum" && (!hasExplicitPresence(field) || msg.isSet(field))) {
          this.enumValue(field.enum, msg.get(field), rules.type.value, path);
        }
        return;
      case "message":
        if (!msg.isSet(field)) {
          this.missingMessage(rules, path);
          return;
        }
        // Envoy hands these to the plugin as bytes (MessageUtil::anyToBytes): any type, even none, loads.
        if (OPAQUE_ANY_FIELDS.has(`${field.parent.typeName}.${field.name}`)) return;
        this.message(msg.get(field), rules, path);
        return;
      case "list":
        this.list(msg, field, rules, path);
        return;
      case "map":
        this.map(msg, field, rules, path);
        return;
    }
  }

  private missingMessage(rules: FieldRules | undefined, path: string): void {
    if (rules?.message?.required) this.add(path, "message.required", "value is required");
    const type = rules?.type;
    if ((type?.case === "any" || type?.case === "duration" || type?.case === "timestamp") && type.value.required) {
      this.add(path, `${type.case}.required`, "value is required");
    }
  }

  private list(
    msg: ReflectMessage,
    field: DescField & { fieldKind: "list" },
    rules: FieldRules | undefined,
    path: string,
  ) {
    const list = msg.get(field);
    const repeated: RepeatedRules | undefined = rules?.type.case === "repeated" ? rules.type.value : undefined;
    if (repeated && !(repeated.ignoreEmpty && list.size === 0)) {
      const r = setRules(repeated);
      const min = r.get("min_items") as bigint | undefined;
      const max = r.get("max_items") as bigint | undefined;
      if (min !== undefined && BigInt(list.size) < min) {
        this.add(path, "repeated.min_items", `value must contain at least ${min} item(s)`);
      }
      if (max !== undefined && BigInt(list.size) > max) {
        this.add(path, "repeated.max_items", `value must contain no more than ${max} item(s)`);
      }
      if (repeated.unique && field.listKind !== "message") {
        const seen = new Set<string>();
        for (const [i, item] of list.entries()) {
          const key = item instanceof Uint8Array ? Buffer.from(item).toString("hex") : String(item);
          if (seen.has(key)) this.add(`${path}[${i}]`, "repeated.unique", "repeated value must contain unique items");
          seen.add(key);
        }
      }
    }
    const items = repeated?.items;
    for (const [i, item] of list.entries()) {
      const itemPath = `${path}[${i}]`;
      if (field.listKind === "message") this.message(item as ReflectMessage, items, itemPath);
      else if (field.listKind === "enum" && items?.type.case === "enum") {
        this.enumValue(field.enum, item as number, items.type.value, itemPath);
      } else if (field.listKind === "scalar" && items) this.scalar(field.scalar, item, items, itemPath);
    }
  }

  private map(
    msg: ReflectMessage,
    field: DescField & { fieldKind: "map" },
    rules: FieldRules | undefined,
    path: string,
  ) {
    const map = msg.get(field);
    const mapRules: MapRules | undefined = rules?.type.case === "map" ? rules.type.value : undefined;
    if (mapRules && !(mapRules.ignoreEmpty && map.size === 0)) {
      const r = setRules(mapRules);
      const min = r.get("min_pairs") as bigint | undefined;
      const max = r.get("max_pairs") as bigint | undefined;
      if (min !== undefined && BigInt(map.size) < min) {
        this.add(path, "map.min_pairs", `value must contain at least ${min} pair(s)`);
      }
      if (max !== undefined && BigInt(map.size) > max) {
        this.add(path, "map.max_pairs", `value must contain no more than ${max} pair(s)`);
      }
    }
    for (const [key, value] of map) {
      const entryPath = keyPath(path, key);
      if (mapRules?.keys) this.scalar(field.mapKey, key, mapRules.keys, entryPath);
      const values = mapRules?.values;
      if (field.mapKind === "message") {
        if (value === undefined) {
          if (mapRules?.noSparse) this.add(entryPath, "map.no_sparse", "value cannot be sparse, all pairs must be set");
        } else this.message(value as ReflectMessage, values, entryPath);
      } else if (field.mapKind === "enum" && values?.type.case === "enum") {
        this.enumValue(field.enum, value as number, values.type.value, entryPath);
      } else if (field.mapKind === "scalar" && values) this.scalar(field.scalar, value, values, entryPath);
    }
  }

  /** A scalar value against the rules of its kind; rules of another kind (a proto mistake) are ignored. */
  private scalar(type: ScalarType, value: unknown, rules: FieldRules, path: string): void {
    const typed = rules.type;
    if (typed.case === "string" && type === ScalarType.STRING) this.string(value as string, typed.value, path);
    else if (typed.case === "bytes" && type === ScalarType.BYTES) this.bytes(value as Uint8Array, typed.value, path);
    else if (typed.case === "bool" && type === ScalarType.BOOL) {
      const r = setRules(typed.value);
      if (r.has("const") && value !== r.get("const"))
        this.add(path, "bool.const", `value must equal ${r.get("const")}`);
    } else if (
      typed.case &&
      NUMERIC_RULES.has(typed.case) &&
      (typeof value === "number" || typeof value === "bigint")
    ) {
      const r = setRules(typed.value);
      if (r.get("ignore_empty") && (value === 0 || value === 0n)) return;
      this.numeric(typed.case, value, r, path, fmtNum);
    }
  }

  /** const, in, not_in and the lt/lte/gt/gte bounds, shared by numbers, durations and timestamps. */
  private numeric(kind: string, value: Num, r: Map<string, unknown>, path: string, fmt: (n: Num) => string): void {
    const get = (name: string) => r.get(name) as Num | undefined;
    const constant = get("const");
    if (constant !== undefined && cmp(value, constant) !== 0) {
      this.add(path, `${kind}.const`, `value must equal ${fmt(constant)}`);
    }
    const inList = (r.get("in") as Num[] | undefined) ?? [];
    if (inList.length > 0 && !inList.some((v) => cmp(value, v) === 0)) {
      this.add(path, `${kind}.in`, `value must be in list [${inList.map(fmt).join(", ")}]`);
    }
    const notIn = (r.get("not_in") as Num[] | undefined) ?? [];
    if (notIn.some((v) => cmp(value, v) === 0)) {
      this.add(path, `${kind}.not_in`, `value must not be in list [${notIn.map(fmt).join(", ")}]`);
    }
    this.range(kind, value, get("lt"), get("lte"), get("gt"), get("gte"), path, fmt);
  }

  // PGV's range semantics: with both bounds, a lower bound above the upper one means "outside".
  private range(
    kind: string,
    v: Num,
    lt: Num | undefined,
    lte: Num | undefined,
    gt: Num | undefined,
    gte: Num | undefined,
    path: string,
    fmt: (n: Num) => string,
  ): void {
    const fail = (rule: string, message: string) => this.add(path, `${kind}.${rule}`, message);
    if (lt !== undefined) {
      if (gt !== undefined) {
        if (cmp(lt, gt) > 0) {
          if (cmp(v, gt) <= 0 || cmp(v, lt) >= 0) fail("gt_lt", `value must be inside range (${fmt(gt)}, ${fmt(lt)})`);
        } else if (cmp(v, lt) >= 0 && cmp(v, gt) <= 0) {
          fail("gt_lt", `value must be outside range [${fmt(lt)}, ${fmt(gt)}]`);
        }
      } else if (gte !== undefined) {
        if (cmp(lt, gte) > 0) {
          if (cmp(v, gte) < 0 || cmp(v, lt) >= 0)
            fail("gte_lt", `value must be inside range [${fmt(gte)}, ${fmt(lt)})`);
        } else if (cmp(v, lt) >= 0 && cmp(v, gte) < 0) {
          fail("gte_lt", `value must be outside range [${fmt(lt)}, ${fmt(gte)})`);
        }
      } else if (cmp(v, lt) >= 0) fail("lt", `value must be less than ${fmt(lt)}`);
    } else if (lte !== undefined) {
      if (gt !== undefined) {
        if (cmp(lte, gt) > 0) {
          if (cmp(v, gt) <= 0 || cmp(v, lte) > 0)
            fail("gt_lte", `value must be inside range (${fmt(gt)}, ${fmt(lte)}]`);
        } else if (cmp(v, lte) > 0 && cmp(v, gt) <= 0) {
          fail("gt_lte", `value must be outside range (${fmt(lte)}, ${fmt(gt)}]`);
        }
      } else if (gte !== undefined) {
        if (cmp(lte, gte) > 0) {
          if (cmp(v, gte) < 0 || cmp(v, lte) > 0) {
            fail("gte_lte", `value must be inside range [${fmt(gte)}, ${fmt(lte)}]`);
          }
        } else if (cmp(v, lte) > 0 && cmp(v, gte) < 0) {
          fail("gte_lte", `value must be outside range (${fmt(lte)}, ${fmt(gte)})`);
        }
      } else if (cmp(v, lte) > 0) fail("lte", `value must be less than or equal to ${fmt(lte)}`);
    } else if (gt !== undefined) {
      if (cmp(v, gt) <= 0) fail("gt", `value must be greater than ${fmt(gt)}`);
    } else if (gte !== undefined && cmp(v, gte) < 0) {
      fail("gte", `value must be greater than or equal to ${fmt(gte)}`);
    }
  }

  private enumValue(desc: DescEnum, value: number, rules: EnumRules, path: string): void {
    const r = setRules(rules);
    if (r.has("const") && value !== r.get("const")) this.add(path, "enum.const", `value must equal ${r.get("const")}`);
    if (rules.definedOnly && !desc.values.some((v) => v.number === value)) {
      this.add(path, "enum.defined_only", `value must be one of the defined enum values, got ${value}`);
    }
    if (rules.in.length > 0 && !rules.in.includes(value)) {
      this.add(path, "enum.in", `value must be in list [${rules.in.join(", ")}]`);
    }
    if (rules.notIn.includes(value))
      this.add(path, "enum.not_in", `value must not be in list [${rules.notIn.join(", ")}]`);
  }

  private string(value: string, rules: StringRules, path: string): void {
    if (rules.ignoreEmpty && value === "") return;
    const r = setRules(rules);
    const fail = (rule: string, message: string) => this.add(path, `string.${rule}`, message);
    const runes = [...value].length;
    const bytes = Buffer.byteLength(value, "utf8");
    const bound = (name: string) => r.get(name) as bigint | undefined;
    if (r.has("const") && value !== r.get("const")) fail("const", `value must equal ${JSON.stringify(r.get("const"))}`);
    const len = bound("len");
    if (len !== undefined && BigInt(runes) !== len) fail("len", `value length must be ${len} runes`);
    const minLen = bound("min_len");
    if (minLen !== undefined && BigInt(runes) < minLen)
      fail("min_len", `value length must be at least ${minLen} runes`);
    const maxLen = bound("max_len");
    if (maxLen !== undefined && BigInt(runes) > maxLen) fail("max_len", `value length must be at most ${maxLen} runes`);
    const lenBytes = bound("len_bytes");
    if (lenBytes !== undefined && BigInt(bytes) !== lenBytes)
      fail("len_bytes", `value length must be ${lenBytes} bytes`);
    const minBytes = bound("min_bytes");
    if (minBytes !== undefined && BigInt(bytes) < minBytes) {
      fail("min_bytes", `value length must be at least ${minBytes} bytes`);
    }
    const maxBytes = bound("max_bytes");
    if (maxBytes !== undefined && BigInt(bytes) > maxBytes) {
      fail("max_bytes", `value length must be at most ${maxBytes} bytes`);
    }
    if (r.has("pattern") && !compilePattern(rules.pattern).test(value)) {
      fail("pattern", `value does not match regex pattern ${JSON.stringify(rules.pattern)}`);
    }
    if (r.has("prefix") && !value.startsWith(rules.prefix)) {
      fail("prefix", `value does not have prefix ${JSON.stringify(rules.prefix)}`);
    }
    if (r.has("suffix") && !value.endsWith(rules.suffix)) {
      fail("suffix", `value does not have suffix ${JSON.stringify(rules.suffix)}`);
    }
    if (r.has("contains") && !value.includes(rules.contains)) {
      fail("contains", `value does not contain substring ${JSON.stringify(rules.contains)}`);
    }
    if (r.has("not_contains") && value.includes(rules.notContains)) {
      fail("not_contains", `value contains substring ${JSON.stringify(rules.notContains)}`);
    }
    if (rules.in.length > 0 && !rules.in.includes(value)) {
      fail("in", `value must be in list [${rules.in.map((v) => JSON.stringify(v)).join(", ")}]`);
    }
    if (rules.notIn.includes(value)) {
      fail("not_in", `value must not be in list [${rules.notIn.map((v) => JSON.stringify(v)).join(", ")}]`);
    }
    this.wellKnownString(value, rules, path);
  }

  private wellKnownString(value: string, rules: StringRules, path: string): void {
    const known = rules.wellKnown;
    const fail = (message: string) => this.add(path, `string.${wellKnownRuleName(known.case)}`, message);
    switch (known.case) {
      case "hostname": {
        const problem = isHostname(value);
        if (problem) fail(`value must be a valid hostname: ${problem}`);
        return;
      }
      case "ip":
        if (!isIPv4(value) && !isIPv6(value)) fail("value must be a valid IP address");
        return;
      case "ipv4":
        if (!isIPv4(value)) fail("value must be a valid IPv4 address");
        return;
      case "ipv6":
        if (!isIPv6(value)) fail("value must be a valid IPv6 address");
        return;
      case "address":
        if (!isIPv4(value) && !isIPv6(value) && isHostname(value)) {
          fail("value must be a valid hostname, or ip address");
        }
        return;
      case "uri":
        if (someChar(value, uriForbiddenChar) || !URL.canParse(value)) fail("value must be a valid absolute URI");
        return;
      case "uriRef":
        if (someChar(value, uriForbiddenChar) || !URL.canParse(value, "http://uri-ref.invalid/")) {
          fail("value must be a valid URI");
        }
        return;
      case "uuid":
        if (!UUID.test(value)) fail("value must be a valid UUID");
        return;
      case "email": {
        const at = value.lastIndexOf("@");
        const local = value.slice(0, Math.max(at, 0));
        const ok = at > 0 && value.length <= 254 && local.length <= 64 && !/[\s<>]/.test(local);
        if (!ok || isHostname(value.slice(at + 1))) fail("value must be a valid email address");
        return;
      }
      case "wellKnownRegex": {
        const strict = rules.strict;
        if (known.value === KnownRegex.HTTP_HEADER_NAME) {
          if (strict ? !HEADER_NAME.test(value) : someChar(value, looseHeaderChar)) {
            fail("value does not match regex pattern for an HTTP header name");
          }
        } else if (known.value === KnownRegex.HTTP_HEADER_VALUE) {
          if (someChar(value, strict ? strictHeaderValueChar : looseHeaderChar)) {
            fail("value does not match regex pattern for an HTTP header value");
          }
        }
        return;
      }
    }
  }

  private bytes(value: Uint8Array, rules: BytesRules, path: string): void {
    if (rules.ignoreEmpty && value.length === 0) return;
    const r = setRules(rules);
    const fail = (rule: string, message: string) => this.add(path, `bytes.${rule}`, message);
    const buf = Buffer.from(value);
    const bound = (name: string) => r.get(name) as bigint | undefined;
    const size = BigInt(value.length);
    if (r.has("const") && !buf.equals(rules.const)) fail("const", "value must equal the constant bytes");
    const len = bound("len");
    if (len !== undefined && size !== len) fail("len", `value length must be ${len} bytes`);
    const minLen = bound("min_len");
    if (minLen !== undefined && size < minLen) fail("min_len", `value length must be at least ${minLen} bytes`);
    const maxLen = bound("max_len");
    if (maxLen !== undefined && size > maxLen) fail("max_len", `value length must be at most ${maxLen} bytes`);
    if (r.has("pattern") && !compilePattern(rules.pattern).test(buf.toString("latin1"))) {
      fail("pattern", `value does not match regex pattern ${JSON.stringify(rules.pattern)}`);
    }
    if (r.has("prefix") && !buf.subarray(0, rules.prefix.length).equals(rules.prefix)) {
      fail("prefix", "value does not have the required prefix");
    }
    if (r.has("suffix") && !buf.subarray(buf.length - rules.suffix.length).equals(rules.suffix)) {
      fail("suffix", "value does not have the required suffix");
    }
    if (r.has("contains") && buf.indexOf(rules.contains) < 0)
      fail("contains", "value does not contain the required bytes");
    if (rules.in.length > 0 && !rules.in.some((v) => buf.equals(v))) fail("in", "value must be in the list");
    if (rules.notIn.some((v) => buf.equals(v))) fail("not_in", "value must not be in the list");
    const known = rules.wellKnown.case;
    if (known === "ip" && value.length !== 4 && value.length !== 16) fail("ip", "value must be a valid IP address");
    if (known === "ipv4" && value.length !== 4) fail("ipv4", "value must be a valid IPv4 address");
    if (known === "ipv6" && value.length !== 16) fail("ipv6", "value must be a valid IPv6 address");
  }

  private duration(value: Duration, rules: DurationRules | undefined, path: string): void {
    const nanos = durationNanos(value);
    if (value.seconds < 0n || value.nanos < 0) {
      this.add(path, "duration.valid", "duration must not be negative");
      return;
    }
    if (value.nanos > 999_999_999 || value.seconds > MAX_DURATION_SECONDS) {
      this.add(path, "duration.valid", `duration out of range (at most ${MAX_DURATION_SECONDS}s)`);
      return;
    }
    if (!rules) return;
    this.numeric("duration", nanos, durationBounds(rules), path, fmtDuration);
  }

  private timestamp(value: Timestamp, rules: TimestampRules, path: string): void {
    const nanos = timestampNanos(value);
    this.numeric("timestamp", nanos, timestampBounds(rules), path, fmtTimestamp);
    const now = BigInt(this.now.getTime()) * 1_000_000n;
    const within = rules.within ? durationNanos(rules.within) : undefined;
    const fail = (rule: string, message: string) => this.add(path, `timestamp.${rule}`, message);
    if (rules.ltNow) {
      if (nanos >= now || (within !== undefined && nanos < now - within)) {
        fail("lt_now", `value must be less than now${within === undefined ? "" : ` within ${fmtDuration(within)}`}`);
      }
    } else if (rules.gtNow) {
      if (nanos <= now || (within !== undefined && nanos > now + within)) {
        fail("gt_now", `value must be greater than now${within === undefined ? "" : ` within ${fmtDuration(within)}`}`);
      }
    } else if (within !== undefined && (nanos < now - within || nanos > now + within)) {
      fail("within", `value must be within ${fmtDuration(within)} of now`);
    }
  }

  private anyRules(any: Any, rules: AnyRules, path: string): void {
    if (rules.in.length > 0 && !rules.in.includes(any.typeUrl)) {
      this.add(path, "any.in", `type URL must be in list [${rules.in.join(", ")}]`);
    }
    if (rules.notIn.includes(any.typeUrl)) {
      this.add(path, "any.not_in", `type URL must not be in list [${rules.notIn.join(", ")}]`);
    }
  }

  /** Unpacks the payload (and a TypedStruct's inner config) and checks it as Envoy does on load. */
  private anyPayload(any: Any, path: string): void {
    const schema = this.schemaFor(any.typeUrl);
    if (!schema) {
      this.add(path, "any.known_type", `type URL ${JSON.stringify(any.typeUrl)} is not a known message type`);
      return;
    }
    let payload: Message;
    try {
      payload = fromBinary(schema, any.value);
    } catch (err) {
      this.add(path, "any.decode", `payload does not decode as ${schema.typeName}: ${(err as Error).message}`);
      return;
    }
    // Envoy reads the older udpa.type.v1.TypedStruct (istiod's) the same as xds.type.v3's.
    if (schema.typeName === "xds.type.v3.TypedStruct" || schema.typeName === "udpa.type.v1.TypedStruct") {
      this.typedStruct(payload as Message & { typeUrl: string; value?: JsonValue }, path);
      return;
    }
    this.message(reflect(schema, payload), undefined, path);
  }

  private typedStruct(typed: { typeUrl: string; value?: JsonValue }, path: string): void {
    const schema = this.schemaFor(typed.typeUrl);
    if (!schema) {
      this.add(
        join(path, "type_url"),
        "any.known_type",
        `type URL ${JSON.stringify(typed.typeUrl)} is not a known message type`,
      );
      return;
    }
    let inner: Message;
    try {
      inner = fromJson(schema, typed.value ?? {}, { registry: this.registry });
    } catch (err) {
      this.add(
        join(path, "value"),
        "any.decode",
        `value does not convert to ${schema.typeName}: ${(err as Error).message}`,
      );
      return;
    }
    this.message(reflect(schema, inner), undefined, join(path, "value"));
  }

  private schemaFor(typeUrl: string): DescMessage | undefined {
    const slash = typeUrl.lastIndexOf("/");
    return slash < 0 ? undefined : this.registry.getMessage(typeUrl.slice(slash + 1));
  }
}

function wellKnownRuleName(known: StringRules["wellKnown"]["case"]): string {
  return known === "wellKnownRegex" ? "well_known_regex" : known === "uriRef" ? "uri_ref" : String(known);
}

function durationBounds(rules: DurationRules): Map<string, unknown> {
  const r = new Map<string, unknown>();
  for (const name of ["const", "lt", "lte", "gt", "gte"] as const) {
    const d = rules[name];
    if (d) r.set(name, durationNanos(d));
  }
  r.set("in", rules.in.map(durationNanos));
  r.set("not_in", rules.notIn.map(durationNanos));
  return r;
}

function timestampBounds(rules: TimestampRules): Map<string, unknown> {
  const r = new Map<string, unknown>();
  for (const name of ["const", "lt", "lte", "gt", "gte"] as const) {
    const t = rules[name];
    if (t) r.set(name, timestampNanos(t));
  }
  return r;
}
