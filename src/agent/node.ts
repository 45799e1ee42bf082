// The proxy's identity and node metadata, built from the pod's environment as pilot-agent builds them
// (pilot/cmd/pilot-agent/app/cmd.go initProxy, pkg/bootstrap/config.go GetNodeMetaData): the node id
// `<type>~<ip>~<pod>.<namespace>~<namespace>.svc.<domain>`, the `ISTIO_META_*`/`ISTIO_METAJSON_*`
// variables projected onto the keys Istio's BootstrapNodeMetadata knows, and the locality.
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { ProxyConfig } from "../config/index.ts";
import type { NodeType } from "../model/index.ts";
import { parseGoBool } from "../util/index.ts";

export type Env = Readonly<Record<string, string | undefined>>;

export interface ProxyIdentity {
  type: NodeType;
  /** The pod IP first, then the host's other private addresses. */
  ipAddresses: string[];
  /** `<pod>.<namespace>`. */
  id: string;
  dnsDomain: string;
}

/** The xDS node id: `type~ip~id~domain`. */
export function serviceNode(proxy: ProxyIdentity): string {
  return [proxy.type, proxy.ipAddresses[0] ?? "", proxy.id, proxy.dnsDomain].join("~");
}

/** Non-loopback, non-link-local addresses of this host (Istio's network.GetPrivateIPs). */
export function privateIPs(): string[] {
  const out: string[] = [];
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) {
      if (a.internal || a.address.startsWith("169.254.") || a.address.toLowerCase().startsWith("fe80:")) continue;
      out.push(a.address);
    }
  }
  return out;
}

/**
 * Who the agent speaks for (pilot-agent's initProxy): POD_NAME, POD_NAMESPACE, and INSTANCE_IP first
 * among the host's private addresses, or among 127.0.0.1 and ::1 when the host has none.
 */
export function proxyIdentity(
  env: Env,
  options: { type?: NodeType; domain?: string; hostIPs?: readonly string[] } = {},
): ProxyIdentity {
  const namespace = env.POD_NAMESPACE ?? "";
  const podIP = env.INSTANCE_IP && isIP(env.INSTANCE_IP) ? env.INSTANCE_IP : undefined;
  const hostIPs = options.hostIPs ?? privateIPs();
  const others = hostIPs.length > 0 ? hostIPs : ["127.0.0.1", "::1"];
  const ipAddresses = podIP ? [podIP] : [];
  for (const ip of others) if (!ipAddresses.includes(ip)) ipAddresses.push(ip);
  return {
    type: options.type ?? "sidecar",
    ipAddresses,
    id: `${env.POD_NAME ?? ""}.${namespace}`,
    dnsDomain: options.domain || `${namespace}.svc.cluster.local`,
  };
}

/** The JSON shape each key of Istio's BootstrapNodeMetadata takes when Go marshals it. */
type GoKind = "string" | "stringBool" | "int" | "stringMap" | "stringArray" | "object" | "podPorts";
const STRING_KEYS = [
  "ISTIO_VERSION",
  "ISTIO_REVISION",
  "INSTANCE_IPS",
  "NAMESPACE",
  "NODE_NAME",
  "WORKLOAD_NAME",
  "INTERCEPTION_MODE",
  "SERVICE_ACCOUNT",
  "HTTP_PROXY_PORT",
  "MESH_ID",
  "CLUSTER_ID",
  "NETWORK",
  "REQUESTED_NETWORK_VIEW",
  "TLS_SERVER_CERT_CHAIN",
  "TLS_SERVER_KEY",
  "TLS_SERVER_ROOT_CERT",
  "TLS_CLIENT_CERT_CHAIN",
  "TLS_CLIENT_KEY",
  "TLS_CLIENT_ROOT_CERT",
  "BASE",
  "IDLE_TIMEOUT",
  "HTTP10",
  "GENERATOR",
  "AUTO_REGISTER_GROUP",
  "WORKLOAD_ENTRY",
  "UNPRIVILEGED_POD",
  "STS_PORT",
  "CLOUDRUN_ADDR",
  "NAME",
  "OWNER",
  "OUTLIER_LOG_PATH",
  "APP_CONTAINERS",
  "ISTIO_PROXY_SHA",
];
const STRING_BOOL_KEYS = [
  "DNS_CAPTURE",
  "DNS_AUTO_ALLOCATE",
  "ENABLE_HBONE",
  "DISABLE_HBONE_SEND",
  "EXIT_ON_ZERO_ACTIVE_CONNECTIONS",
  "INBOUND_LISTENER_EXACT_BALANCE",
  "OUTBOUND_LISTENER_EXACT_BALANCE",
  "METADATA_DISCOVERY",
  "ENVOY_SKIP_DEPRECATED_LOGS",
];
const METADATA_KINDS: ReadonlyMap<string, GoKind> = new Map<string, GoKind>([
  ...STRING_KEYS.map((k): [string, GoKind] => [k, "string"]),
  ...STRING_BOOL_KEYS.map((k): [string, GoKind] => [k, "stringBool"]),
  ["ENVOY_STATUS_PORT", "int"],
  ["ENVOY_PROMETHEUS_PORT", "int"],
  ["LABELS", "stringMap"],
  ["STATIC_LABELS", "stringMap"],
  ["ANNOTATIONS", "stringMap"],
  ["PLATFORM_METADATA", "stringMap"],
  ["PILOT_SAN", "stringArray"],
  ["PROXY_CONFIG", "object"],
  ["POD_PORTS", "podPorts"],
]);

/**
 * POD_PORTS is a JSON list of container ports held in a string (Istio's PodPortList): Go reads it and
 * writes it back compact, with only name, containerPort and protocol.
 */
function podPorts(text: string): string {
  const ports: unknown = JSON.parse(text);
  if (!Array.isArray(ports)) throw new Error("node metadata POD_PORTS: not a JSON list");
  return JSON.stringify(
    ports.map((p: { name?: unknown; containerPort?: unknown; protocol?: unknown }) => ({
      ...(typeof p.name === "string" && p.name !== "" ? { name: p.name } : {}),
      containerPort: typeof p.containerPort === "number" ? p.containerPort : 0,
      protocol: typeof p.protocol === "string" ? p.protocol : "",
    })),
  );
}

/**
 * One metadata value as Go's typed struct keeps it: wrong JSON types fail as json.Unmarshal fails,
 * empty values and false StringBools are dropped (omitempty).
 */
function typedValue(key: string, kind: GoKind, value: JsonValue): JsonValue | undefined {
  const wrongType = () => new Error(`node metadata ${key}: cannot use ${JSON.stringify(value)} as Go ${kind}`);
  switch (kind) {
    case "string":
      if (typeof value !== "string") throw wrongType();
      return value === "" ? undefined : value;
    case "stringBool": {
      // Istio's StringBool reads the string with Go's strconv.ParseBool.
      const parsed = typeof value === "string" ? parseGoBool(value) : undefined;
      if (parsed === undefined) throw wrongType();
      return parsed ? "true" : undefined;
    }
    case "int":
      if (typeof value !== "number" || !Number.isInteger(value)) throw wrongType();
      return value === 0 ? undefined : value;
    case "stringMap":
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw wrongType();
      if (!Object.values(value).every((v) => typeof v === "string")) throw wrongType();
      return Object.keys(value).length === 0 ? undefined : value;
    case "stringArray":
      if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) throw wrongType();
      return value.length === 0 ? undefined : value;
    case "object":
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw wrongType();
      return value;
    case "podPorts":
      if (typeof value !== "string") throw wrongType();
      return podPorts(value);
  }
}

/** An integer variable, or its default when unset or not an integer (as Istio's env.Register). */
function intEnv(value: string | undefined, fallback: number): number {
  return value !== undefined && /^-?\d+$/.test(value) ? Number(value) : fallback;
}

/** A JSON object of strings, or undefined when the text is absent, not one, or empty. */
function stringMap(json: string | undefined): Record<string, string> | undefined {
  if (!json) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
  const entries = Object.entries(parsed);
  if (entries.length === 0 || !entries.every(([, v]) => typeof v === "string")) return undefined;
  return Object.fromEntries(entries) as Record<string, string>;
}

/** Kubernetes downward-API files: one `key="go-quoted value"` per line. */
export function parseDownwardAPI(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq < 0) continue;
    const quoted = line.slice(eq + 1);
    const value: unknown = JSON.parse(quoted);
    if (typeof value !== "string") throw new Error(`failed to unquote ${quoted}`);
    out[line.slice(0, eq)] = value;
  }
  return out;
}

/** A downward-API file, or undefined when it does not exist. */
function readDownwardAPI(path: string): Record<string, string> | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  return parseDownwardAPI(text);
}

export interface GrpcLocality {
  region?: string;
  zone?: string;
  sub_zone?: string;
}

export interface NodeMetadataOptions {
  env: Env;
  instanceIPs: readonly string[];
  /** This proxy's ProxyConfig (mesh defaults, the mesh config file, then PROXY_CONFIG). */
  proxyConfig: ProxyConfig;
  /** Where the downward API mounts `labels` and `annotations` (Istio: ./etc/istio/pod). */
  podInfoDir: string;
}

/** The node metadata (Go's typed BootstrapNodeMetadata, as JSON) and locality pilot-agent sends. */
export function nodeMetadata(options: NodeMetadataOptions): { metadata: JsonObject; locality: GrpcLocality } {
  const { env } = options;
  const raw: JsonObject = {};
  for (const [k, v] of Object.entries(options.proxyConfig.proxyMetadata ?? {})) {
    if (k.startsWith("ISTIO_META_")) raw[k.slice(11)] = v;
  }
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith("ISTIO_META_") && v !== undefined) raw[k.slice(11)] = v;
  }
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith("ISTIO_METAJSON_") || v === undefined) continue;
    // Istio merges each JSON object into the metadata and only warns about one that does not parse.
    try {
      const parsed: unknown = JSON.parse(v);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) Object.assign(raw, parsed);
    } catch {}
  }

  const meta: JsonObject = {};
  for (const [key, value] of Object.entries(raw)) {
    const kind = METADATA_KINDS.get(key);
    if (kind === undefined) continue; // Go's typed struct has no field for it.
    const typed = typedValue(key, kind, value);
    if (typed !== undefined) meta[key] = typed;
  }
  const set = (key: string, value: JsonValue | undefined) => {
    if (value === undefined || value === "" || value === 0) delete meta[key];
    else meta[key] = value;
  };
  set("INSTANCE_IPS", [...new Set(options.instanceIPs)].join(","));
  set("ENVOY_STATUS_PORT", intEnv(env.ENVOY_STATUS_PORT, 15021));
  set("ENVOY_PROMETHEUS_PORT", intEnv(env.ENVOY_PROMETHEUS_PORT, 15090));
  // The ProxyConfig as protojson writes it: plain JSON of its set fields.
  meta.PROXY_CONFIG = JSON.parse(JSON.stringify(options.proxyConfig)) as JsonObject;
  const staticLabels = stringMap(env.ISTIO_METAJSON_LABELS);
  if (staticLabels) {
    meta.LABELS = staticLabels;
    meta.STATIC_LABELS = staticLabels;
  }
  if (env.POD_NAME !== undefined) set("NAME", env.POD_NAME);
  if (env.POD_NAMESPACE !== undefined) set("NAMESPACE", env.POD_NAMESPACE);
  if (env.SERVICE_ACCOUNT !== undefined) set("SERVICE_ACCOUNT", env.SERVICE_ACCOUNT);

  // Pod labels from the downward API sit over the static ones; pod-template-hash is not a workload label.
  const podLabels = readDownwardAPI(join(options.podInfoDir, "labels"));
  if (podLabels) {
    const labels: Record<string, string> = { ...(meta.STATIC_LABELS as Record<string, string> | undefined) };
    for (const [k, v] of Object.entries(podLabels)) if (k !== "pod-template-hash") labels[k] = v;
    set("LABELS", Object.keys(labels).length > 0 ? labels : undefined);
  }
  const podAnnotations = readDownwardAPI(join(options.podInfoDir, "annotations"));
  if (podAnnotations) {
    const annotations = { ...(meta.ANNOTATIONS as Record<string, string> | undefined), ...podAnnotations };
    set("ANNOTATIONS", Object.keys(annotations).length > 0 ? annotations : undefined);
  }

  // The istio-locality label, `region.zone.subzone` or with slashes.
  const labels = meta.LABELS as Record<string, string> | undefined;
  const localityLabel = (labels?.["istio-locality"] ?? "").replaceAll(".", "/");
  if (labels && localityLabel !== "") labels["istio-locality"] = localityLabel;
  const locality: GrpcLocality = {};
  if (localityLabel !== "") {
    const [region, zone, ...subZone] = localityLabel.split("/");
    if (region) locality.region = region;
    if (zone) locality.zone = zone;
    if (subZone.length > 0 && subZone.join("/") !== "") locality.sub_zone = subZone.join("/");
  }

  // With a mutual-TLS control plane the agent names the SAN it expects of istiod.
  if (options.proxyConfig.controlPlaneAuthPolicy === "MUTUAL_TLS") {
    const host = (options.proxyConfig.discoveryAddress ?? "").split(":")[0];
    meta.PILOT_SAN = [host === "localhost" ? "istiod.istio-system.svc" : host];
  }
  return { metadata: meta, locality };
}
