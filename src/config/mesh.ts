// MeshConfig: the `--meshConfig` YAML, decoded against Istio's field table, merged over Istio's
// defaults the way Istio merges it (pkg/config/mesh), then validated (Istio's ValidateMeshConfig).

import { deepFreeze } from "../util/index.ts";
import { decodeYaml } from "./mesh-decode.ts";
import type { ExtensionProvider, MeshConfig, ProxyConfig } from "./mesh-types.ts";
import { validateMeshConfig } from "./mesh-validate.ts";
import type { Issue } from "./model.ts";
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
  const user = decodeYaml(yamlText ?? "", "MeshConfig", out);
  const mesh = mergeOverDefaults(user);
  if (out.ok) validateMeshConfig(mesh, out);
  if (!out.ok) throw new Error(`invalid mesh config:\n${out.errors.map((e) => `  ${formatIssue(e)}`).join("\n")}`);
  return { mesh, warnings: out.warnings.map(formatIssue) };
}

function formatIssue(issue: Issue): string {
  return issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`;
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

/** Field-wise over `base` (the defaults, or a pod's `proxy.istio.io/config` over the mesh's); `proxyMetadata` entries merge key by key. */
export function mergeProxyConfig(base: ProxyConfig, overlay: JsonObject): ProxyConfig {
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
