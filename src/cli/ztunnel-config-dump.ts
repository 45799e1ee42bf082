// ztunnel's admin /config_dump as istioctl reads it: decoded into istioctl's Go structs (its writer's
// api.go) with encoding/json's rules — keys matched exactly, else case-insensitively, the last match
// winning; null and missing fields left at Go's zero value; unknown fields dropped; a type mismatch
// reported as Go reports it — and written back as json.MarshalIndent writes those structs (fields in
// struct order, omitempty, map keys sorted) or as sigs.k8s.io/yaml's JSONToYAML converts that JSON.
import { Document, isScalar, Scalar, visit } from "yaml";
import { readsAsOtherType } from "./proxy-config-format.ts";

/** How one Go type decodes and encodes. */
type GoType =
  | { kind: "string" | "bool" | "any" }
  | { kind: "uint"; bits: 16 | 32 }
  | { kind: "int" }
  | { kind: "list"; of: GoType }
  | { kind: "map"; key: "string" | "uint16"; of: GoType }
  | { kind: "struct"; name: string; fields: readonly GoField[] }
  | { kind: "pointer"; to: GoType }
  | { kind: "cidrVip" };

interface GoField {
  json: string;
  type: GoType;
  omitEmpty?: boolean;
}

const STRING: GoType = { kind: "string" };
const BOOL: GoType = { kind: "bool" };
const UINT16: GoType = { kind: "uint", bits: 16 };
const UINT32: GoType = { kind: "uint", bits: 32 };
const list = (of: GoType): GoType => ({ kind: "list", of });
const pointer = (to: GoType): GoType => ({ kind: "pointer", to });
const struct = (name: string, fields: GoField[]): GoType => ({ kind: "struct", name, fields });
const field = (json: string, type: GoType, omitEmpty = false): GoField => ({ json, type, omitEmpty });

const GATEWAY_ADDRESS = struct("GatewayAddress", [field("destination", STRING)]);
const LOCALITY = struct("Locality", [
  field("region", STRING, true),
  field("zone", STRING, true),
  field("subzone", STRING, true),
]);
const APPLICATION_TUNNEL = struct("ApplicationTunnel", [
  field("protocol", STRING),
  field("port", pointer(UINT16), true),
]);

/** A workload as istioctl decodes it (configdump.ZtunnelWorkload). */
export const WORKLOAD = struct("ZtunnelWorkload", [
  field("uid", STRING),
  field("workloadIps", list(STRING)),
  field("waypoint", pointer(GATEWAY_ADDRESS), true),
  field("networkGateway", pointer(GATEWAY_ADDRESS), true),
  field("protocol", STRING),
  field("name", STRING),
  field("namespace", STRING),
  field("serviceAccount", STRING),
  field("workloadName", STRING),
  field("workloadType", STRING),
  field("canonicalName", STRING),
  field("canonicalRevision", STRING),
  field("clusterId", STRING),
  field("trustDomain", STRING, true),
  // omitempty does nothing to a struct in encoding/json: an empty locality is written as {}.
  field("locality", LOCALITY, true),
  field("node", STRING),
  field("network", STRING, true),
  field("status", STRING),
  field("hostname", STRING),
  field("capacity", UINT32),
  field("applicationTunnel", APPLICATION_TUNNEL, true),
  field("authorizationPolicies", list(STRING), true),
]);

const ENDPOINT = struct("ZtunnelEndpoint", [
  field("workloadUid", STRING),
  field("service", STRING),
  field("address", STRING, true),
  field("port", { kind: "map", key: "uint16", of: UINT16 }),
]);

/** A service as istioctl decodes it (configdump.ZtunnelService). */
export const SERVICE = struct("ZtunnelService", [
  field("name", STRING),
  field("namespace", STRING),
  field("hostname", STRING),
  field("vips", list(STRING)),
  field("cidrVips", list({ kind: "cidrVip" }), true),
  field("ports", { kind: "map", key: "string", of: { kind: "int" } }),
  field(
    "loadBalancer",
    pointer(
      struct("LoadBalancer", [
        field("mode", STRING),
        field("routingPreferences", list(STRING)),
        field("healthPolicy", STRING),
      ]),
    ),
    true,
  ),
  field("waypoint", pointer(GATEWAY_ADDRESS), true),
  field("endpoints", { kind: "map", key: "string", of: pointer(ENDPOINT) }),
  field("subjectAltNames", list(STRING), true),
  field("ipFamilies", STRING),
  field("canonical", BOOL, true),
  field("visibility", STRING, true),
]);

const STRING_MATCH = struct("StringMatch", [
  field("Exact", STRING, true),
  field("Suffix", STRING, true),
  field("Prefix", STRING, true),
  field("Presence", { kind: "any" }, true),
]);
const SERVICE_ACCOUNT_MATCH = struct("ServiceAccountMatch", [
  field("namespace", STRING),
  field("serviceAccount", STRING),
]);
const POLICY_MATCH = struct("PolicyMatch", [
  field("namespaces", list(STRING_MATCH), true),
  field("notNamespaces", list(STRING_MATCH), true),
  field("principals", list(STRING_MATCH), true),
  field("notPrincipals", list(STRING_MATCH), true),
  field("sourceIps", list(STRING), true),
  field("notSourceIps", list(STRING), true),
  field("destinationIps", list(STRING), true),
  field("notDestinationIps", list(STRING), true),
  field("destinationPorts", list(UINT16), true),
  field("notDestinationPorts", list(UINT16), true),
  field("serviceAccounts", list(SERVICE_ACCOUNT_MATCH), true),
  field("notServiceAccounts", list(SERVICE_ACCOUNT_MATCH), true),
]);

/** An authorization policy as istioctl decodes it (configdump.ZtunnelPolicy). */
export const POLICY = struct("ZtunnelPolicy", [
  field("name", STRING),
  field("namespace", STRING),
  field("scope", STRING),
  field("action", STRING),
  field("rules", list(list(list(pointer(POLICY_MATCH))))),
]);

const CERT = struct("Cert", [
  field("pem", STRING),
  field("serialNumber", STRING),
  field("validFrom", STRING),
  field("expirationTime", STRING),
]);

/** A certificate (chain) as istioctl decodes it (configdump.CertsDump). */
export const CERTIFICATE = struct("CertsDump", [
  field("identity", STRING),
  field("state", STRING),
  field("certChain", list(pointer(CERT))),
  field("rootCerts", list(pointer(CERT))),
]);

const CONNECTION = (name: string) =>
  struct(name, [
    field("src", STRING),
    field("originalDst", STRING),
    field("actualDst", STRING),
    field("protocol", STRING),
  ]);

/** A workload's connections as istioctl decodes them (configdump.WorkloadState). */
export const WORKLOAD_STATE = struct("WorkloadState", [
  field("state", STRING, true),
  field(
    "connections",
    struct("WorkloadConnections", [
      field("inbound", list(CONNECTION("InboundConnection"))),
      field("outbound", list(CONNECTION("OutboundConnection"))),
    ]),
    true,
  ),
  field(
    "info",
    struct("WorkloadInfo", [
      field("name", STRING),
      field("namespace", STRING),
      field("trustDomain", STRING),
      field("serviceAccount", STRING),
    ]),
  ),
]);

// ---------------------------------------------------------------------------------------------------
// The decoded shapes the writer reads (the fields it uses).

export interface Workload {
  uid: string;
  workloadIps: string[] | null;
  waypoint: { destination: string } | null;
  protocol: string;
  name: string;
  namespace: string;
  node: string;
  status: string;
  hostname: string;
}

export interface Service {
  name: string;
  namespace: string;
  hostname: string;
  vips: string[] | null;
  waypoint: { destination: string } | null;
  endpoints: Map<string, { workloadUid: string } | null> | null;
}

export interface Policy {
  name: string;
  namespace: string;
  scope: string;
  action: string;
}

export interface Cert {
  serialNumber: string;
  validFrom: string;
  expirationTime: string;
}

export interface Certificate {
  identity: string;
  state: string;
  certChain: (Cert | null)[] | null;
  rootCerts: (Cert | null)[] | null;
}

export interface Connection {
  src: string;
  originalDst: string;
  actualDst: string;
  protocol: string;
}

export interface WorkloadState {
  connections: { inbound: Connection[] | null; outbound: Connection[] | null };
  info: { name: string; namespace: string };
}

/** A ztunnel config dump as istioctl's ConfigWriter holds it once primed. */
export interface ZtunnelDump {
  workloads: Workload[];
  services: Service[];
  policies: Policy[];
  /** null when the dump has none: `certificates -o json` prints null then. */
  certificates: Certificate[] | null;
  workloadState: Map<string, WorkloadState> | null;
  /** The dump as read, which `all -o json|yaml` prints. */
  raw: string;
}

// ---------------------------------------------------------------------------------------------------
// Decoding

/** Decoded values: Go maps as Maps (their keys as Go writes them back), structs as objects. */
type Decoded = string | number | boolean | null | unknown[] | Map<string, unknown> | Record<string, unknown>;

/** encoding/json's first type error, as it words it; decoding goes on as Go's does. */
class TypeErrors {
  first: string | undefined;
  note(value: unknown, type: GoType, where: { struct?: string; path: string[] }, numberText?: string) {
    if (this.first !== undefined) return;
    const what = numberText !== undefined ? `number ${numberText}` : jsonKind(value);
    this.first =
      where.struct === undefined
        ? `json: cannot unmarshal ${what} into Go value of type ${goTypeName(type)}`
        : `json: cannot unmarshal ${what} into Go struct field ${where.struct}.${where.path.join(".")} of type ${goTypeName(type)}`;
  }
}

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return "array";
  if (typeof value === "object") return "object";
  return typeof value === "boolean" ? "bool" : typeof value;
}

function goTypeName(type: GoType): string {
  switch (type.kind) {
    case "uint":
      return `uint${type.bits}`;
    case "list":
      return `[]${goTypeName(type.of)}`;
    case "map":
      return `map[${type.key}]${goTypeName(type.of)}`;
    case "struct":
      return `configdump.${type.name}`;
    case "pointer":
      return `*${goTypeName(type.to)}`;
    case "cidrVip":
      return "configdump.CIDRVIP";
    case "any":
      return "interface {}";
    default:
      return type.kind;
  }
}

/** Go's zero value of `type`. */
function zero(type: GoType): Decoded {
  switch (type.kind) {
    case "string":
      return "";
    case "bool":
      return false;
    case "uint":
    case "int":
      return 0;
    case "struct":
      return Object.fromEntries(type.fields.map((f) => [f.json, zero(f.type)]));
    case "cidrVip":
      return { cidr: "", network: "" };
    default:
      return null;
  }
}

interface Where {
  struct?: string;
  path: string[];
}

function decode(value: unknown, type: GoType, errors: TypeErrors, where: Where): Decoded {
  if (value === null) return zero(type);
  const mismatch = (numberText?: string) => {
    errors.note(value, type, where, numberText);
    return zero(type);
  };
  switch (type.kind) {
    case "any":
      return value as Decoded;
    case "string":
      return typeof value === "string" ? value : mismatch();
    case "bool":
      return typeof value === "boolean" ? value : mismatch();
    case "uint":
    case "int": {
      if (typeof value !== "number") return mismatch();
      const max = type.kind === "int" ? 2 ** 63 - 1 : 2 ** type.bits - 1;
      const min = type.kind === "int" ? -(2 ** 63) : 0;
      if (!Number.isInteger(value) || value > max || value < min) return mismatch(String(value));
      return value;
    }
    case "pointer":
      return decode(value, type.to, errors, where);
    case "list":
      if (!Array.isArray(value)) return mismatch();
      return value.map((v) => decode(v, type.of, errors, where));
    case "map": {
      if (typeof value !== "object" || Array.isArray(value)) return mismatch();
      const out = new Map<string, unknown>();
      for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
        let goKey = key;
        if (type.key === "uint16") {
          const n = /^\d+$/.test(key) ? Number(key) : Number.NaN;
          if (!(n <= 65535)) {
            errors.note(key, UINT16, where, key);
            continue;
          }
          goKey = String(n);
        }
        out.set(goKey, decode(v, type.of, errors, where));
      }
      return out;
    }
    case "cidrVip":
      return decodeCidrVip(value, type, errors, where);
    case "struct": {
      if (typeof value !== "object" || Array.isArray(value)) return mismatch();
      const out = zero(type) as Record<string, unknown>;
      for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
        const f =
          type.fields.find((f) => f.json === key) ??
          type.fields.find((f) => f.json.toLowerCase() === key.toLowerCase());
        if (!f) continue;
        out[f.json] = decode(v, f.type, errors, { struct: type.name, path: [...where.path, f.json] });
      }
      return out;
    }
  }
}

/** ztunnel writes a CIDR VIP as `{cidr, network}` or as the string `network/cidr`. */
function decodeCidrVip(value: unknown, type: GoType, errors: TypeErrors, where: Where): Decoded {
  if (typeof value === "string") {
    const slash = value.indexOf("/");
    if (slash < 0) {
      errors.first ??= `invalid cidrVip ${JSON.stringify(value)}`;
      return zero(type);
    }
    return { cidr: value.slice(slash + 1), network: value.slice(0, slash) };
  }
  const fields = struct("CIDRVIP", [field("cidr", STRING), field("network", STRING, true)]);
  return decode(value, fields, errors, where);
}

/** A list, or a map's values (ztunnel has written both), of `type`; null when absent. */
function listOrMap(value: unknown, type: GoType, errors: TypeErrors): unknown[] | null {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) return decode(value, list(pointer(type)), errors, { path: [] }) as unknown[];
  const decoded = decode(value, { kind: "map", key: "string", of: pointer(type) }, errors, { path: [] });
  return decoded instanceof Map ? [...decoded.values()] : [];
}

/** Key lookup as encoding/json does it: exact, else case-insensitive; the last match wins. */
function member(object: Record<string, unknown>, name: string): unknown {
  let found: unknown;
  for (const [key, value] of Object.entries(object)) {
    if (key.toLowerCase() === name.toLowerCase()) found = value;
  }
  return found;
}

/** Parses a config dump as istioctl's ConfigWriter.Prime; throws with istioctl's message. */
export function parseZtunnelDump(text: string): ZtunnelDump {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // Go's words for a truncated dump; other syntax errors keep JavaScript's (which say where).
    const message = (err as Error).message;
    const why = message.startsWith("Unexpected end of JSON input") ? "unexpected end of JSON input" : message;
    throw new Error(`error unmarshalling config dump response from ztunnel: ${why}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error(
      `error unmarshalling config dump response from ztunnel: json: cannot unmarshal ${jsonKind(parsed)} into Go value of type configdump.rawDump`,
    );
  }
  const top = parsed as Record<string, unknown>;
  const errors = new TypeErrors();
  const check = () => {
    if (errors.first !== undefined) throw new Error(errors.first);
  };
  // istioctl decodes the workload state with the dump itself, before the lists.
  const stateType: GoType = { kind: "map", key: "string", of: WORKLOAD_STATE };
  const workloadState = decode(member(top, "workloadstate") ?? null, stateType, errors, {
    path: ["workloadstate"],
  });
  if (errors.first !== undefined)
    throw new Error(`error unmarshalling config dump response from ztunnel: ${errors.first}`);
  const services = listOrMap(member(top, "services"), SERVICE, errors);
  check();
  const workloads = listOrMap(member(top, "workloads"), WORKLOAD, errors);
  check();
  const certificates = listOrMap(member(top, "certificates"), CERTIFICATE, errors);
  check();
  const policies = listOrMap(member(top, "policies"), POLICY, errors);
  check();
  return {
    workloads: (workloads ?? []) as Workload[],
    services: (services ?? []) as Service[],
    policies: (policies ?? []) as Policy[],
    certificates: certificates as Certificate[] | null,
    workloadState: workloadState as Map<string, WorkloadState> | null,
    raw: text,
  };
}

// ---------------------------------------------------------------------------------------------------
// Encoding

const INDENT = "    ";

/** `values` (decoded as `type`) as json.MarshalIndent(values, "", "    ") writes them. */
export function marshalIndent(values: readonly unknown[] | null, type: GoType): string {
  return encode(values, list(pointer(type)), "");
}

function isEmpty(value: unknown, type: GoType): boolean {
  switch (type.kind) {
    case "string":
      return value === "";
    case "bool":
      return value === false;
    case "uint":
    case "int":
      return value === 0;
    case "list":
      return value === null || (value as unknown[]).length === 0;
    case "map":
      return value === null || (value as Map<string, unknown>).size === 0;
    case "pointer":
    case "any":
      return value === null;
    default:
      return false; // structs are never empty to encoding/json
  }
}

function encode(value: unknown, type: GoType, indent: string): string {
  const inner = indent + INDENT;
  switch (type.kind) {
    case "string":
      return goString(value as string);
    case "any":
      return goAny(value, indent);
    case "bool":
    case "uint":
    case "int":
      return String(value);
    case "pointer":
      return value === null ? "null" : encode(value, type.to, indent);
    case "cidrVip": {
      const { network, cidr } = value as { network: string; cidr: string };
      return goString(`${network}/${cidr}`);
    }
    case "list": {
      if (value === null) return "null";
      const items = value as unknown[];
      if (items.length === 0) return "[]";
      return `[\n${items.map((v) => inner + encode(v, type.of, inner)).join(",\n")}\n${indent}]`;
    }
    case "map": {
      if (value === null) return "null";
      const entries = [...(value as Map<string, unknown>)].sort(([a], [b]) => compareBytes(a, b));
      if (entries.length === 0) return "{}";
      const lines = entries.map(([k, v]) => `${inner}${goString(k)}: ${encode(v, type.of, inner)}`);
      return `{\n${lines.join(",\n")}\n${indent}}`;
    }
    case "struct": {
      const object = value as Record<string, unknown>;
      const shown = type.fields.filter((f) => !(f.omitEmpty && isEmpty(object[f.json], f.type)));
      if (shown.length === 0) return "{}";
      const lines = shown.map((f) => `${inner}${goString(f.json)}: ${encode(object[f.json], f.type, inner)}`);
      return `{\n${lines.join(",\n")}\n${indent}}`;
    }
  }
}

/** An interface{} value: what encoding/json decoded (objects as maps, so keys sorted). */
function goAny(value: unknown, indent: string): string {
  if (value === null || typeof value !== "object") return typeof value === "string" ? goString(value) : String(value);
  const inner = indent + INDENT;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => inner + goAny(v, inner)).join(",\n")}\n${indent}]`;
  }
  const entries = Object.entries(value).sort(([a], [b]) => compareBytes(a, b));
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([k, v]) => `${inner}${goString(k)}: ${goAny(v, inner)}`).join(",\n")}\n${indent}}`;
}

/** A string as encoding/json writes it: HTML characters and line separators escaped. */
function goString(text: string): string {
  return JSON.stringify(text).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Go compares strings byte by byte (UTF-8); for these keys that is code unit order. */
function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** JSON as sigs.k8s.io/yaml.JSONToYAML writes it (go-yaml v2: keys in its natural order, lines folded past 80 columns). */
export function jsonToYaml(json: string): string {
  const doc = new Document(JSON.parse(json));
  const keyText = (node: unknown) => String(isScalar(node) ? node.value : node);
  visit(doc, {
    Map(_key, node) {
      node.items.sort((a, b) => goYamlKeyOrder(keyText(a.key), keyText(b.key)));
    },
    Scalar(_key, node) {
      if (typeof node.value !== "string") return;
      if (node.value.includes("\n")) node.type = Scalar.BLOCK_LITERAL;
      // go-yaml double-quotes a string that YAML 1.1 would read as another type, or as null ("").
      else if (node.value === "" || readsAsOtherType(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return foldLongLines(doc.toString({ indentSeq: false, lineWidth: 0, singleQuote: true }));
}

/** go-yaml's best width: a plain or single-quoted scalar breaks at its first space past this column. */
const YAML_WIDTH = 80;

/**
 * go-yaml v2 breaks a long plain or single-quoted scalar at a space (not one of several) once the line
 * is past 80 columns, going on at the value's indentation; the yaml package would break it before.
 * Block literals' lines are left alone.
 */
function foldLongLines(text: string): string {
  const out: string[] = [];
  let literalIndent = -1;
  for (const line of text.split("\n")) {
    const indent = line.length - line.trimStart().length;
    if (literalIndent >= 0 && (indent >= literalIndent || line.trim() === "")) {
      out.push(line);
      continue;
    }
    literalIndent = /[:-] \|[-+]?$/.test(line) ? indent + 1 : -1;
    const item = /^((?:\s*- )*\s*)(?:(?:"[^"]*"|[^\s'"][^:]*): )?/.exec(line);
    const valueStart = item?.[0].length ?? 0;
    if (line.length <= YAML_WIDTH || line[valueStart] === '"') {
      out.push(line);
      continue;
    }
    const continuation = " ".repeat(item?.[0].length === item?.[1].length ? valueStart : (item?.[1].length ?? 0) + 2);
    let current = line.slice(0, valueStart);
    for (let i = valueStart; i < line.length; i++) {
      const c = line[i];
      if (
        c === " " &&
        current.length > YAML_WIDTH &&
        line[i - 1] !== " " &&
        line[i + 1] !== " " &&
        i + 1 < line.length
      ) {
        out.push(current);
        current = continuation;
        continue;
      }
      current += c;
    }
    out.push(current);
  }
  return out.join("\n");
}

/** go-yaml v2's key order: letters after other characters, runs of digits compared as numbers. */
function goYamlKeyOrder(a: string, b: string): number {
  const ar = [...a];
  const br = [...b];
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = /\p{L}/u.test(ar[i]);
    const bl = /\p{L}/u.test(br[i]);
    if (al && bl) return ar[i] < br[i] ? -1 : 1;
    if (al || bl) return bl ? -1 : 1;
    let an = 0;
    let bn = 0;
    if (ar[i] === "0" || br[i] === "0") {
      for (let j = i - 1; j >= 0 && /\d/.test(ar[j]); j--) {
        if (ar[j] !== "0") {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let ai = i;
    let bi = i;
    for (; ai < ar.length && /\d/.test(ar[ai]); ai++) an = an * 10 + Number(ar[ai]);
    for (; bi < br.length && /\d/.test(br[bi]); bi++) bn = bn * 10 + Number(br[bi]);
    if (an !== bn) return an < bn ? -1 : 1;
    if (ai !== bi) return ai < bi ? -1 : 1;
    return ar[i] < br[i] ? -1 : 1;
  }
  return ar.length - br.length;
}
