// The proxy behind an xDS connection, read from the Envoy `Node` of its first request as Istio
// reads it (pkg/model/proxy.go): the id `type~ip~id~domain`, and the `ISTIO_META_*` keys the agent
// puts in the node metadata.

import { isIP } from "node:net";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { core } from "../api/index.ts";
import { parseGoBool } from "../util/index.ts";

export type NodeType = "sidecar" | "router" | "waypoint" | "ztunnel" | "agentgateway";

/** The types Istio names in its error message (agentgateway is accepted but not advertised). */
export const NODE_TYPES: readonly NodeType[] = ["sidecar", "router", "waypoint", "ztunnel"];
const ACCEPTED_NODE_TYPES: ReadonlySet<string> = new Set<NodeType>([...NODE_TYPES, "agentgateway"]);

/** Metadata keys whose value is a string→string map. */
const MAP_KEYS = ["LABELS", "STATIC_LABELS", "ANNOTATIONS", "PLATFORM_METADATA"] as const;
/** Metadata keys holding comma-separated lists (Istio's StringList). */
const LIST_KEYS = ["INSTANCE_IPS", "REQUESTED_NETWORK_VIEW"] as const;
/** Metadata keys holding JSON arrays of strings (Go []string): the agent's bootstrap-only PILOT_SAN. */
const ARRAY_KEYS = ["PILOT_SAN"] as const;
/** Metadata keys holding "true"/"false" strings (Istio's StringBool); a JSON boolean is accepted too. */
const BOOL_KEYS = [
  "HTTP10",
  "ENABLE_SELF_DISCOVERY",
  "DNS_CAPTURE",
  "DNS_AUTO_ALLOCATE",
  "ENABLE_HBONE",
  "DISABLE_HBONE_SEND",
  "UNPRIVILEGED_POD",
  "EXIT_ON_ZERO_ACTIVE_CONNECTIONS",
  "INBOUND_LISTENER_EXACT_BALANCE",
  "OUTBOUND_LISTENER_EXACT_BALANCE",
  "METADATA_DISCOVERY",
  "ENVOY_SKIP_DEPRECATED_LOGS",
] as const;
/** Metadata keys holding plain strings. Numbers are accepted and kept as their decimal text. */
const STRING_KEYS = [
  "ISTIO_VERSION",
  "ISTIO_REVISION",
  "NAMESPACE",
  "NODE_NAME",
  "WORKLOAD_NAME",
  "INTERCEPTION_MODE",
  "SERVICE_ACCOUNT",
  "HTTP_PROXY_PORT",
  "MESH_ID",
  "CLUSTER_ID",
  "NETWORK",
  "POD_PORTS",
  "TLS_SERVER_CERT_CHAIN",
  "TLS_SERVER_KEY",
  "TLS_SERVER_ROOT_CERT",
  "TLS_CLIENT_CERT_CHAIN",
  "TLS_CLIENT_KEY",
  "TLS_CLIENT_ROOT_CERT",
  "BASE",
  "IDLE_TIMEOUT",
  "GENERATOR",
  "DNS_PROXY_ADDR",
  "AUTO_REGISTER_GROUP",
  "WORKLOAD_ENTRY",
  "STS_PORT",
  "ENVOY_STATUS_PORT",
  "ENVOY_PROMETHEUS_PORT",
  "ENVOY_SECURE_METRICS_PORT",
  "ENVOY_SECURE_MERGED_METRICS_PORT",
  "CLOUDRUN_ADDR",
  "WORKLOAD_IDENTITY_SOCKET_FILE",
  // Bootstrap-only keys, kept for debug output.
  "NAME",
  "OWNER",
  "OUTLIER_LOG_PATH",
  "APP_CONTAINERS",
  "ISTIO_PROXY_SHA",
] as const;

type MapKey = (typeof MAP_KEYS)[number];
type ListKey = (typeof LIST_KEYS)[number] | (typeof ARRAY_KEYS)[number];
type BoolKey = (typeof BOOL_KEYS)[number];
type StringKey = (typeof STRING_KEYS)[number];

/** The node metadata keys Istio reads, typed; every key (known or not) stays in `raw`. */
export type NodeMetadata = { [K in StringKey]?: string } & { [K in BoolKey]?: boolean } & {
  [K in ListKey]?: string[];
} & { [K in MapKey]?: Record<string, string> } & {
  /** The mesh ProxyConfig overrides, as JSON (`PROXY_CONFIG`). */
  PROXY_CONFIG?: JsonObject;
  /** Every key as sent; EnvoyFilter `proxy.metadata` matches against these. */
  raw: JsonObject;
};

export interface Locality {
  region: string;
  zone: string;
  subZone: string;
}

export interface IstioVersion {
  major: number;
  minor: number;
  patch: number;
}

export interface ProxyNode {
  type: NodeType;
  /** The `id` part of the node id: `<pod>.<namespace>` for Kubernetes workloads. */
  id: string;
  /** The whole Envoy node id. */
  nodeId: string;
  dnsDomain: string;
  /** From `INSTANCE_IPS`, else the IP of the node id. Never empty. */
  ipAddresses: string[];
  /** The namespace whose config applies: `NAMESPACE`, else the first label of the DNS domain. */
  configNamespace: string;
  /** Workload labels: `LABELS` with `STATIC_LABELS` on top. */
  labels: Record<string, string>;
  clusterId: string;
  locality: Locality;
  /** The generator named by the `GENERATOR` metadata ("grpc" for proxyless gRPC), if any. */
  generator?: string;
  /** Parsed `ISTIO_VERSION`; undefined when absent or not `x.y.z`. */
  istioVersion?: IstioVersion;
  metadata: NodeMetadata;
  /** The node's `cluster` field (Envoy's service cluster). */
  serviceCluster: string;
  userAgent: string;
  /** SPIFFE identities of a caller that passed authentication and the identity check (15012 only). */
  verifiedIdentities?: readonly string[];
}

export type ProxyParseResult = { proxy: ProxyNode; error?: undefined } | { proxy?: undefined; error: string };

/** Reads the proxy from an Envoy node; a bad id or metadata gives an error value (InvalidArgument). */
export function parseProxy(node: core.Node | undefined): ProxyParseResult {
  if (!node || node.id === "") return { error: "missing node information" };
  const meta = parseNodeMetadata(node.metadata);
  if (typeof meta === "string") return { error: meta };

  const parts = node.id.split("~");
  if (parts.length !== 4) return { error: `missing parts in the service node ${JSON.stringify(node.id)}` };
  const [type, ip, id, dnsDomain] = parts;
  if (!ACCEPTED_NODE_TYPES.has(type)) {
    return {
      error: `invalid node type (valid types: ${NODE_TYPES.join(", ")}) in the service node ${JSON.stringify(node.id)}`,
    };
  }
  const instanceIps = meta.INSTANCE_IPS ?? [];
  const ipAddresses =
    instanceIps.length > 0 && instanceIps.every((a) => isIP(a) !== 0) ? instanceIps : isIP(ip) !== 0 ? [ip] : [];
  if (ipAddresses.length === 0) return { error: "no valid IP address in the service node id or metadata" };

  const configNamespace = meta.NAMESPACE || (dnsDomain.includes(".") ? dnsDomain.split(".")[0] : "");
  return { proxy: proxyNode(node, meta, { type: type as NodeType, id, dnsDomain, ipAddresses, configNamespace }) };
}

/** The proxy of `node`, given what its id says (or what stands in for it). */
function proxyNode(
  node: core.Node,
  meta: NodeMetadata,
  identity: Pick<ProxyNode, "type" | "id" | "dnsDomain" | "ipAddresses" | "configNamespace">,
): ProxyNode {
  // Istio's field order, which JSON debug output shows.
  return {
    type: identity.type,
    id: identity.id,
    nodeId: node.id,
    dnsDomain: identity.dnsDomain,
    ipAddresses: identity.ipAddresses,
    configNamespace: identity.configNamespace,
    labels: { ...meta.LABELS, ...meta.STATIC_LABELS },
    clusterId: meta.CLUSTER_ID ?? "",
    locality: {
      region: node.locality?.region ?? "",
      zone: node.locality?.zone ?? "",
      subZone: node.locality?.subZone ?? "",
    },
    generator: meta.GENERATOR || undefined,
    istioVersion: parseIstioVersion(meta.ISTIO_VERSION),
    metadata: meta,
    serviceCluster: node.cluster,
    userAgent: node.userAgentName,
  };
}

/**
 * Any proxy, as go-control-plane takes them: a node id in Istio's `type~ip~id~domain` form is read as
 * istiod reads it (parseProxy); any other non-empty id is a sidecar known by that id alone (its IP
 * addresses from INSTANCE_IPS, its namespace from NAMESPACE), for servers that do not build Istio's config.
 */
export function parseAnyProxy(node: core.Node | undefined): ProxyParseResult {
  if (!node || node.id === "" || node.id.split("~").length === 4) return parseProxy(node);
  const meta = parseNodeMetadata(node.metadata);
  if (typeof meta === "string") return { error: meta };
  const ipAddresses = (meta.INSTANCE_IPS ?? []).filter((a) => isIP(a) !== 0);
  const identity = { type: "sidecar" as const, id: node.id, dnsDomain: "", ipAddresses };
  return { proxy: proxyNode(node, meta, { ...identity, configNamespace: meta.NAMESPACE ?? "" }) };
}

/** The typed view of a node's metadata Struct, or an error message naming the bad key. */
export function parseNodeMetadata(struct: JsonObject | undefined): NodeMetadata | string {
  const raw = struct ?? {};
  const meta: NodeMetadata = { raw };
  for (const key of STRING_KEYS) {
    const v = raw[key];
    if (v === undefined || v === null) continue;
    if (typeof v === "string") meta[key] = v;
    else if (typeof v === "number") meta[key] = String(v);
    else return badMetadata(key, "a string", v);
  }
  for (const key of BOOL_KEYS) {
    const v = raw[key];
    if (v === undefined || v === null || v === "") continue;
    const value = typeof v === "boolean" ? v : typeof v === "string" ? parseGoBool(v) : undefined;
    if (value === undefined) return badMetadata(key, "a boolean string", v);
    meta[key] = value;
  }
  for (const key of LIST_KEYS) {
    const v = raw[key];
    if (v === undefined || v === null || v === "") continue;
    if (typeof v !== "string") return badMetadata(key, "a comma-separated string", v);
    meta[key] = v.split(",");
  }
  for (const key of ARRAY_KEYS) {
    const v = raw[key];
    if (v === undefined || v === null) continue;
    if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) return badMetadata(key, "an array of strings", v);
    meta[key] = v;
  }
  for (const key of MAP_KEYS) {
    const v = raw[key];
    if (v === undefined || v === null) continue;
    const map = stringMap(v);
    if (!map) return badMetadata(key, "an object of strings", v);
    meta[key] = map;
  }
  const proxyConfig = raw.PROXY_CONFIG;
  if (proxyConfig !== undefined && proxyConfig !== null) {
    if (!isJsonObject(proxyConfig)) return badMetadata("PROXY_CONFIG", "an object", proxyConfig);
    meta.PROXY_CONFIG = proxyConfig;
  }
  return meta;
}

function badMetadata(key: string, want: string, got: JsonValue): string {
  return `failed to unmarshal node metadata: ${key} must be ${want}, got ${JSON.stringify(got)}`;
}

function isJsonObject(v: JsonValue): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function stringMap(v: JsonValue): Record<string, string> | undefined {
  if (!isJsonObject(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, s] of Object.entries(v)) {
    if (typeof s !== "string") return undefined;
    out[k] = s;
  }
  return out;
}

/**
 * `1.24.3`, `1.24.3-dev` or `1.24` → numbers, a missing patch the newest (65535, as Istio's
 * ParseIstioVersion); anything else → undefined (Istio then assumes the newest).
 */
export function parseIstioVersion(version: string | undefined): IstioVersion | undefined {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(version ?? "");
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: m[3] === undefined ? 65535 : Number(m[3]) };
}

/** Istio's VersionGreaterOrEqual; a proxy without a parsable version counts as the newest. */
export function versionAtLeast(
  proxy: Pick<ProxyNode, "istioVersion">,
  major: number,
  minor: number,
  patch = 0,
): boolean {
  const v = proxy.istioVersion;
  if (!v) return true;
  if (v.major !== major) return v.major > major;
  if (v.minor !== minor) return v.minor > minor;
  return v.patch >= patch;
}
