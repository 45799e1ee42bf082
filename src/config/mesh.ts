// MeshConfig: the `--meshConfig` YAML, decoded against Istio's field table, merged over Istio's
// defaults the way Istio merges it (pkg/config/mesh), then validated (Istio's ValidateMeshConfig).
import { parse as parseYaml } from "yaml";
import {
  ENUM_VALUES,
  type ExtensionProvider,
  MESSAGE_FIELDS,
  type MeshConfig,
  type ProxyConfig,
} from "./mesh-types.ts";
import { validateMeshConfig } from "./mesh-validate.ts";
import type { Issue } from "./model.ts";
import { parseGoDuration } from "./validation/common/durations.ts";
import { goQuote } from "./validation/common/format.ts";
import { asObject, type JsonObject } from "./validation/common/json.ts";
import { Findings } from "./validation/findings.ts";

export type { MeshConfig, ProxyConfig } from "./mesh-types.ts";

/** Istio's DefaultProxyConfig: what every proxy gets unless `defaultConfig` overrides it. */
const DEFAULT_PROXY_CONFIG: ProxyConfig = {
  configPath: "./etc/istio/proxy",
  serviceCluster: "istio-proxy",
  drainDuration: "45s",
  terminationDrainDuration: "5s",
  proxyAdminPort: 15000,
  controlPlaneAuthPolicy: "MUTUAL_TLS",
  discoveryAddress: "istiod.istio-system.svc:15012",
  binaryPath: "/usr/local/bin/envoy",
  statNameLength: 189,
  statusPort: 15020,
};

/** Istio's DefaultMeshConfig (pkg/config/mesh). */
export const DEFAULT_MESH_CONFIG: Readonly<MeshConfig> = deepFreeze({
  enableTracing: true,
  accessLogFile: "",
  accessLogEncoding: "TEXT",
  accessLogFormat: "",
  enableEnvoyAccessLogService: false,
  protocolDetectionTimeout: "0s",
  ingressService: "istio-ingressgateway",
  ingressControllerMode: "STRICT",
  ingressClass: "istio",
  trustDomain: "cluster.local",
  trustDomainAliases: [],
  enableAutoMtls: true,
  outboundTrafficPolicy: { mode: "ALLOW_ANY" },
  inboundTrafficPolicy: { mode: "PASSTHROUGH" },
  localityLbSetting: { enabled: true },
  certificates: [],
  defaultConfig: DEFAULT_PROXY_CONFIG,
  rootNamespace: "istio-system",
  proxyListenPort: 15001,
  proxyInboundListenPort: 15006,
  connectTimeout: "10s",
  defaultServiceExportTo: ["*"],
  defaultVirtualServiceExportTo: ["*"],
  defaultDestinationRuleExportTo: ["*"],
  // Used only when DNS lookups fail; successful answers follow their TTL.
  dnsRefreshRate: "60s",
  serviceSettings: [],
  enablePrometheusMerge: true,
  defaultProviders: {},
  extensionProviders: [
    { name: "prometheus", prometheus: {} },
    { name: "stackdriver", stackdriver: {} },
    { name: "envoy", envoyFileAccessLog: { path: "/dev/stdout" } },
  ],
} satisfies MeshConfig);

/**
 * Reads a mesh config file's text (absent or empty: Istio's defaults). Throws an Error listing every
 * problem when the YAML does not decode or the merged config is invalid; returns the warnings otherwise.
 */
export function loadMeshConfig(yamlText?: string): { mesh: MeshConfig; warnings: string[] } {
  const out = new Findings("");
  const user = decodeMeshYaml(yamlText ?? "", out);
  const mesh = mergeOverDefaults(user);
  if (out.ok) validateMeshConfig(mesh, out);
  if (!out.ok) throw new Error(`invalid mesh config:\n${out.errors.map((e) => `  ${formatIssue(e)}`).join("\n")}`);
  return { mesh, warnings: out.warnings.map(formatIssue) };
}

function formatIssue(issue: Issue): string {
  return issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`;
}

function decodeMeshYaml(text: string, out: Findings): JsonObject {
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (err) {
    out.error(`cannot parse YAML: ${(err as Error).message}`);
    return {};
  }
  if (parsed === null || parsed === undefined) return {};
  return decodeMessage(parsed, "MeshConfig", out) ?? {};
}

// ---- Decoding: Istio's jsonpb rules against the field table in mesh-types.ts.

/** proto field names (snake_case) map to their JSON names; jsonpb accepts both. */
function jsonName(key: string): string {
  return key.replace(/_([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());
}

function decodeMessage(value: unknown, message: string, out: Findings): JsonObject | undefined {
  if (value === null) return undefined;
  const obj = asObject(value);
  if (!obj) {
    out.error(`expected an object for ${message}, found ${JSON.stringify(value)}`);
    return undefined;
  }
  const fields = MESSAGE_FIELDS[message];
  const decoded: JsonObject = {};
  for (const [key, fieldValue] of Object.entries(obj)) {
    const name = key in fields ? key : jsonName(key);
    const kind = fields[name];
    if (kind === undefined) {
      out.at(key).error(`unknown field "${key}" in istio.mesh.v1alpha1.${message}`);
      continue;
    }
    const result = decodeField(fieldValue, kind, out.at(name));
    if (result !== undefined) decoded[name] = result;
  }
  return decoded;
}

function decodeField(value: unknown, kind: string, out: Findings): unknown {
  if (value === null || value === undefined) return undefined;
  if (kind.endsWith("[]")) {
    if (!Array.isArray(value)) {
      out.error(`expected a list, found ${JSON.stringify(value)}`);
      return undefined;
    }
    // An empty list decodes to an absent one.
    if (value.length === 0) return undefined;
    const element = kind.slice(0, -2);
    return value.map((item, i) => {
      if (item === null) out.at("", i).error("null is not allowed in a list");
      return decodeField(item, element, out.at("", i));
    });
  }
  if (kind.startsWith("map:")) {
    const obj = asObject(value);
    if (!obj) {
      out.error(`expected a map, found ${JSON.stringify(value)}`);
      return undefined;
    }
    const entryKind = kind.slice(4);
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, decodeField(v, entryKind, out.at(k))]));
  }
  if (kind.startsWith("msg:")) return decodeMessage(value, kind.slice(4), out);
  if (kind.startsWith("enum:")) return decodeEnum(value, kind.slice(5), out);
  return decodeScalar(value, kind, out);
}

function decodeEnum(value: unknown, name: string, out: Findings): string | undefined {
  const values = ENUM_VALUES[name];
  if (typeof value === "string" && value in values) return value;
  const byNumber = Object.entries(values).find(([, n]) => n === value);
  if (byNumber) return byNumber[0];
  out.error(`unknown value ${goQuote(JSON.stringify(value))} for enum istio.mesh.v1alpha1.${name}`);
  return undefined;
}

const INT_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

function decodeScalar(value: unknown, kind: string, out: Findings): unknown {
  switch (kind) {
    case "string":
      if (typeof value === "string") return value;
      break;
    case "bool":
      if (typeof value === "boolean") return value;
      break;
    case "double":
      if (typeof value === "number") return value;
      break;
    case "duration": {
      if (typeof value !== "string") break;
      const parsed = parseGoDuration(value);
      if ("error" in parsed) {
        out.error(`bad Duration: ${parsed.error}`);
        return undefined;
      }
      return value;
    }
    case "struct":
    case "object":
      if (asObject(value)) return value;
      break;
    default: {
      // Integers: jsonpb accepts numbers and decimal strings.
      const n = typeof value === "string" && /^-?[0-9]+$/.test(value) ? Number(value) : value;
      const [min, max] = INT_RANGES[kind];
      if (typeof n === "number" && Number.isInteger(n) && n >= min && n <= max) return n;
      out.error(`invalid value for ${kind} field: ${JSON.stringify(value)}`);
      return undefined;
    }
  }
  out.error(`invalid value for ${kind} field: ${JSON.stringify(value)}`);
  return undefined;
}

// ---- Merging: every top-level field replaces the default, except the ones Istio merges.

function mergeOverDefaults(user: JsonObject): MeshConfig {
  const defaults = structuredClone(DEFAULT_MESH_CONFIG) as MeshConfig;
  const mesh: MeshConfig = { ...defaults, ...user };
  mesh.defaultConfig = mergeProxyConfig(defaults.defaultConfig ?? {}, asObject(user.defaultConfig) ?? {});
  mesh.defaultProviders = { ...defaults.defaultProviders, ...asObject(user.defaultProviders) };
  mesh.extensionProviders = mergeExtensionProviders(
    defaults.extensionProviders ?? [],
    (user.extensionProviders as ExtensionProvider[] | undefined) ?? [],
  );
  const aliases = new Set([...(defaults.trustDomainAliases ?? []), ...(mesh.trustDomainAliases ?? [])]);
  mesh.trustDomainAliases = [...aliases].sort();
  return mesh;
}

/** Field-wise over the defaults; `proxyMetadata` entries merge key by key. */
function mergeProxyConfig(base: ProxyConfig, overlay: JsonObject): ProxyConfig {
  const merged: ProxyConfig = { ...base, ...overlay };
  // serviceCluster and tracingServiceName are one proto oneof: setting one clears the other.
  if ("tracingServiceName" in overlay && !("serviceCluster" in overlay)) delete merged.serviceCluster;
  if (base.proxyMetadata || overlay.proxyMetadata) {
    merged.proxyMetadata = { ...base.proxyMetadata, ...(overlay.proxyMetadata as Record<string, string> | undefined) };
  }
  return merged;
}

/** A provider named like an existing one replaces its settings in place; others are appended. */
function mergeExtensionProviders(base: ExtensionProvider[], overlay: ExtensionProvider[]): ExtensionProvider[] {
  const merged = [...base];
  for (const provider of overlay) {
    const index = merged.findIndex((existing) => existing.name === provider.name);
    if (index >= 0) merged[index] = provider;
    else merged.push(provider);
  }
  return merged;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
