// istioctl's XdsStatusWriter: the sync status of every proxy from the control planes' syncz
// responses (CSDS ClientConfigs), as a table (subscribed types, or with verbosity every type's
// status), or the responses themselves as JSON or YAML.
import { toJson } from "@bufbuild/protobuf";
import { csds, discovery, registry, unpackAny } from "../api/index.ts";
import { shortType, TypeUrl } from "../xds/types.ts";
import { goJson, goYaml } from "./proxy-config-format.ts";
import { alignTabs } from "./proxy-config-tabwriter.ts";
import type { StatusOutputFormat } from "./proxy-status-args.ts";

export interface StatusWriterOptions {
  format: StatusOutputFormat;
  /** Only proxies whose node metadata NAMESPACE is this. */
  namespace?: string;
  verbose?: boolean;
  /** "Now", for the age of each status (tests fix it). */
  now?: Date;
}

interface ProxyRow {
  proxyId: string;
  clusterId: string;
  istiodId: string;
  istiodVersion: string;
  typeStatus: Map<string, string>;
}

const IGNORED = "IGNORED";
const CORE_ORDER: readonly string[] = [TypeUrl.Cluster, TypeUrl.Listener, TypeUrl.Endpoint, TypeUrl.Route];
const VERBOSE_TYPES = [...CORE_ORDER, TypeUrl.ExtensionConfiguration];
const TABLE = { minWidth: 0, padding: 5 };

/** The output for the responses of each control plane (keyed by its name). */
export function writeStatus(responses: Map<string, discovery.DiscoveryResponse>, options: StatusWriterOptions): string {
  if (options.format !== "table") return machineReadable(responses, options);
  const rows = statusRows(responses, options);
  const seen = new Set(rows.flatMap((r) => [...r.typeStatus.keys()]));
  if (options.verbose) {
    const types = [...new Set([...seen, ...VERBOSE_TYPES])].sort();
    const header = ["NAME", "CLUSTER", ...types.map(shortType), "ISTIOD", "VERSION"];
    const lines = rows.map((r) => [
      r.proxyId,
      r.clusterId,
      ...types.map((t) => r.typeStatus.get(t) ?? IGNORED),
      r.istiodId,
      r.istiodVersion,
    ]);
    return alignTabs([header, ...lines].map((l) => `${l.join("\t")}\n`).join(""), TABLE);
  }
  const types = [...CORE_ORDER.filter((t) => seen.has(t)), ...[...seen].filter((t) => !CORE_ORDER.includes(t)).sort()];
  const header = ["NAME", "CLUSTER", "ISTIOD", "VERSION", "SUBSCRIBED TYPES"];
  const lines = rows.map((r) => {
    const subscribed = types.filter((t) => (r.typeStatus.get(t) ?? IGNORED) !== IGNORED).map(shortType);
    const summary = subscribed.length === 0 ? "0" : `${subscribed.length} (${subscribed.join(",")})`;
    return [r.proxyId, r.clusterId, r.istiodId, r.istiodVersion, summary];
  });
  return alignTabs([header, ...lines].map((l) => `${l.join("\t")}\n`).join(""), TABLE);
}

function clientConfigs(response: discovery.DiscoveryResponse, namespace: string | undefined): csds.ClientConfig[] {
  const configs: csds.ClientConfig[] = [];
  for (const resource of response.resources) {
    const config = unpackAny(resource, csds.ClientConfigSchema);
    if (!config) throw new Error(`could not unmarshal ClientConfig: resource of type ${resource.typeUrl}`);
    if (namespace && metadataString(config, "NAMESPACE") !== namespace) continue;
    configs.push(config);
  }
  return configs;
}

function metadataString(config: csds.ClientConfig, key: string): string {
  const value = config.node?.metadata?.[key];
  return typeof value === "string" ? value : "";
}

function statusRows(responses: Map<string, discovery.DiscoveryResponse>, options: StatusWriterOptions): ProxyRow[] {
  const now = options.now ?? new Date();
  const rows: ProxyRow[] = [];
  for (const response of responses.values()) {
    const istiodId = controlPlaneId(response);
    for (const config of clientConfigs(response, options.namespace)) {
      rows.push({
        proxyId: config.node?.id ?? "",
        clusterId: metadataString(config, "CLUSTER_ID"),
        istiodId,
        istiodVersion: metadataString(config, "ISTIO_VERSION"),
        typeStatus: new Map(config.genericXdsConfigs.map((c) => [c.typeUrl, formatStatus(c, now)])),
      });
    }
  }
  return rows.sort((a, b) => (a.proxyId < b.proxyId ? -1 : a.proxyId > b.proxyId ? 1 : 0));
}

/**
 * The control plane's ID from the response's identifier: Istio's is JSON ({"ID": ...}); a plain
 * identifier (sluiced's) is the ID itself.
 */
export function controlPlaneId(response: discovery.DiscoveryResponse): string {
  const identifier = response.controlPlane?.identifier;
  if (identifier === undefined) return "MISSING";
  try {
    const parsed: unknown = JSON.parse(identifier);
    if (parsed && typeof parsed === "object" && "ID" in parsed && typeof parsed.ID === "string") return parsed.ID;
  } catch {
    // not JSON: the identifier names the control plane
  }
  return identifier;
}

function formatStatus(config: csds.ClientConfig_GenericXdsConfig, now: Date): string {
  switch (config.configStatus) {
    case csds.ConfigStatus.UNKNOWN:
      return IGNORED;
    case csds.ConfigStatus.NOT_SENT:
      return "NOT SENT";
    default: {
      const name = csds.ConfigStatus[config.configStatus];
      if (!config.lastUpdated) return name;
      const updated = Number(config.lastUpdated.seconds) * 1000 + config.lastUpdated.nanos / 1e6;
      return `${name} (${humanDuration(now.getTime() - updated)})`;
    }
  }
}

/** Kubernetes' duration.HumanDuration: the age column of kubectl. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(seconds / 3600);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.floor(hours / 24);
    const d = days % 365;
    return d === 0 ? `${Math.floor(days / 365)}y` : `${Math.floor(days / 365)}y${d}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

// istioctl prints each response as proto JSON indented by four spaces (YAML: the same, keys sorted).
function machineReadable(responses: Map<string, discovery.DiscoveryResponse>, options: StatusWriterOptions): string {
  let out = "";
  for (const response of responses.values()) {
    const resources = response.resources.filter((r) => {
      if (!options.namespace) return true;
      const config = unpackAny(r, csds.ClientConfigSchema);
      return config !== undefined && metadataString(config, "NAMESPACE") === options.namespace;
    });
    const json = toJson(discovery.DiscoveryResponseSchema, { ...response, resources }, { registry });
    out += `${options.format === "yaml" ? goYaml(json) : goJson(json)}\n`;
  }
  return out;
}
