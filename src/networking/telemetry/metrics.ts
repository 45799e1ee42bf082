// Metrics from the Telemetry API (Istio's telemetry.go mergeMetrics and generateStatsConfig): the
// metrics providers in scope, per workload mode the metrics disabled or with tag overrides, and the
// istio.stats config (stats.PluginConfig, as JSON) a Prometheus provider gets.
import { type JsonObject, toJson } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import type { MeshConfig } from "../../config/index.ts";
import type { Telemetry, TelemetryMetricsOverridesMatch } from "../../config/types/index.ts";
import { toDuration } from "../duration.ts";
import type { ListenerClass } from "../httpfilter/listener-class.ts";
import { type WorkloadMode, workloadMode } from "./select.ts";

/** Istio's metric names and the Prometheus metrics they are. */
const PROMETHEUS_METRICS: Readonly<Record<string, string>> = {
  GRPC_REQUEST_MESSAGES: "request_messages_total",
  GRPC_RESPONSE_MESSAGES: "response_messages_total",
  REQUEST_COUNT: "requests_total",
  REQUEST_DURATION: "request_duration_milliseconds",
  REQUEST_SIZE: "request_bytes",
  RESPONSE_SIZE: "response_bytes",
  TCP_CLOSED_CONNECTIONS: "tcp_connections_closed_total",
  TCP_OPENED_CONNECTIONS: "tcp_connections_opened_total",
  TCP_RECEIVED_BYTES: "tcp_received_bytes_total",
  TCP_SENT_BYTES: "tcp_sent_bytes_total",
};
const ALL_METRICS = Object.keys(PROMETHEUS_METRICS).sort();

interface MetricOverride {
  disabled?: boolean;
  /** Tag name → value to set, or null to remove the tag. */
  tags: Map<string, string | null>;
}

/** One provider's merged metrics for one mode. */
interface ModeMetrics {
  /** ALL_METRICS disabled: the provider's filter is left out. */
  disabled: boolean;
  overrides: Map<string, MetricOverride>;
}

export interface MergedMetrics {
  /** Provider name → mode → merged overrides. */
  providers: Map<string, Record<WorkloadMode, ModeMetrics>>;
  /** metrics[].reportingInterval, the last one set. */
  reportingInterval?: string;
}

const MODES: readonly WorkloadMode[] = ["CLIENT", "SERVER"];

function modesOf(mode: string | undefined): readonly WorkloadMode[] {
  return mode === "CLIENT" || mode === "SERVER" ? [mode] : MODES;
}

function isAllMetrics(match: TelemetryMetricsOverridesMatch | undefined): boolean {
  return match?.customMetric === undefined && (match?.metric ?? "ALL_METRICS") === "ALL_METRICS";
}

function metricsOf(match: TelemetryMetricsOverridesMatch | undefined): readonly string[] {
  if (match?.customMetric !== undefined) return [match.customMetric];
  return isAllMetrics(match) ? ALL_METRICS : [match?.metric ?? ""];
}

/**
 * Istio's mergeMetrics: providers named last (else MeshConfig defaultProviders.metrics) are in scope; a
 * metrics entry without providers applies to its parent's; later overrides win, tag by tag.
 */
export function mergeMetrics(chain: readonly Telemetry[], mesh: MeshConfig): MergedMetrics {
  const entries = chain.flatMap((t) => t.spec?.metrics ?? []);
  const defaults = mesh.defaultProviders?.metrics ?? [];
  const providers = new Map<string, Record<WorkloadMode, ModeMetrics>>();
  const empty = (): Record<WorkloadMode, ModeMetrics> => ({
    CLIENT: { disabled: false, overrides: new Map() },
    SERVER: { disabled: false, overrides: new Map() },
  });
  if (entries.length === 0) for (const name of defaults) providers.set(name, empty());
  let inScope = defaults;
  let reportingInterval: string | undefined;
  for (const entry of entries) {
    const names = (entry.providers ?? []).map((p) => p.name);
    if (names.length > 0) inScope = names;
    if (entry.reportingInterval) reportingInterval = entry.reportingInterval;
  }
  let parent = defaults;
  for (const entry of entries) {
    const named = (entry.providers ?? []).map((p) => p.name);
    const names = named.length > 0 ? named : parent;
    parent = names;
    for (const name of names) {
      if (!inScope.includes(name)) continue;
      const byMode = providers.get(name) ?? empty();
      providers.set(name, byMode);
      for (const override of entry.overrides ?? []) {
        const modes = modesOf(override.match?.mode);
        if (isAllMetrics(override.match) && override.disabled) {
          for (const mode of modes) byMode[mode].disabled = true;
          continue;
        }
        // A narrower level can enable again what the root disabled.
        for (const mode of modes) byMode[mode].disabled = false;
        for (const mode of modes) {
          for (const metric of metricsOf(override.match)) {
            const merged: MetricOverride = byMode[mode].overrides.get(metric) ?? { tags: new Map() };
            if (override.disabled !== undefined && override.disabled !== null) merged.disabled = override.disabled;
            for (const [tag, change] of Object.entries(override.tagOverrides ?? {})) {
              merged.tags.set(tag, change.operation === "REMOVE" ? null : (change.value ?? ""));
            }
            byMode[mode].overrides.set(metric, merged);
          }
        }
      }
    }
  }
  return { providers, reportingInterval };
}

/**
 * The istio.stats config of the first Prometheus provider in scope for a listener class; undefined
 * when none applies or its metrics are all disabled for the class's mode.
 */
export function statsConfig(
  merged: MergedMetrics,
  mesh: MeshConfig,
  listenerClass: ListenerClass,
  // A waypoint reports as a gateway on the server side.
  waypoint = false,
): JsonObject | undefined {
  const prometheus = [...merged.providers.keys()]
    .sort()
    .find((name) =>
      (mesh.extensionProviders ?? []).some((p) => (p.name ?? "").toLowerCase() === name.toLowerCase() && p.prometheus),
    );
  if (prometheus === undefined) return undefined;
  const metrics = merged.providers.get(prometheus)?.[workloadMode(listenerClass)];
  if (!metrics || metrics.disabled) return undefined;
  const config: JsonObject = {};
  if (listenerClass !== "sidecarOutbound") config.disable_host_header_fallback = true;
  const interval = toDuration(merged.reportingInterval);
  if (interval) config.tcp_reporting_duration = toJson(DurationSchema, interval);
  if (waypoint) config.reporter = "SERVER_GATEWAY";
  const overrides = [...metrics.overrides.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (overrides.length > 0) {
    config.metrics = overrides.map(([metric, override]) => {
      const entry: JsonObject = { name: PROMETHEUS_METRICS[metric] ?? metric };
      const tags = [...override.tags.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const dimensions = Object.fromEntries(tags.filter(([, v]) => v !== null));
      if (Object.keys(dimensions).length > 0) entry.dimensions = dimensions;
      const removed = tags.filter(([, v]) => v === null).map(([tag]) => tag);
      if (removed.length > 0) entry.tags_to_remove = removed;
      if (override.disabled) entry.drop = true;
      return entry;
    });
  }
  return config;
}
