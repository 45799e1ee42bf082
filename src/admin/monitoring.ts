// What /metrics adds to the process's registry (Istio's pilot/pkg/bootstrap/monitoring.go and the
// monitoring of pilot/pkg/xds): the Node process metrics with the process_* families Go's process
// collector adds (network bytes, the address-space limit), istiod_uptime_seconds, pilot_info and
// istio_build, and istiod_managed_clusters once a cluster is read.
import { readFileSync } from "node:fs";
import { Counter, collectDefaultMetrics, Gauge, type Registry } from "prom-client";
import { SLUICE_VERSION } from "../util/version.ts";

const startedAt = Date.now();

/**
 * The bytes received and sent by the process's network namespace, from /proc/self/net/netstat's IpExt
 * InOctets and OutOctets, as Go's process collector reads them; undefined where there is no such file.
 */
export function readNetworkBytes(netstat = "/proc/self/net/netstat"): { received: number; sent: number } | undefined {
  let text: string;
  try {
    text = readFileSync(netstat, "utf8");
  } catch {
    return undefined;
  }
  const lines = text.split("\n").filter((l) => l.startsWith("IpExt:"));
  const [names, values] = lines.map((l) => l.trim().split(/\s+/).slice(1));
  if (!names || !values) return undefined;
  const value = (name: string) => Number(values[names.indexOf(name)]);
  const received = value("InOctets");
  const sent = value("OutOctets");
  return Number.isFinite(received) && Number.isFinite(sent) ? { received, sent } : undefined;
}

/**
 * The process's address-space limit (the soft "Max address space" of /proc/self/limits), 2^64 - 1 when
 * unlimited as Go's procfs reads it (2^64 as a float64, what Prometheus shows); undefined without the file.
 */
export function readVirtualMemoryMax(limits = "/proc/self/limits"): number | undefined {
  let text: string;
  try {
    text = readFileSync(limits, "utf8");
  } catch {
    return undefined;
  }
  const soft = /^Max address space\s+(\S+)/m.exec(text)?.[1];
  if (soft === undefined) return undefined;
  return soft === "unlimited" ? 2 ** 64 : Number(soft);
}

/** Registers the process metrics, uptime and build info on `metrics`, once per registry. */
export function registerMonitoringMetrics(metrics: Registry, version: string): void {
  if (metrics.getSingleMetric("istiod_uptime_seconds")) return;
  collectDefaultMetrics({ register: metrics });
  if (readNetworkBytes()) {
    new Counter({
      name: "process_network_receive_bytes_total",
      help: "Number of bytes received by the process over the network.",
      registers: [metrics],
      collect() {
        this.reset();
        this.inc(readNetworkBytes()?.received ?? 0);
      },
    });
    new Counter({
      name: "process_network_transmit_bytes_total",
      help: "Number of bytes sent by the process over the network.",
      registers: [metrics],
      collect() {
        this.reset();
        this.inc(readNetworkBytes()?.sent ?? 0);
      },
    });
  }
  const virtualMemoryMax = readVirtualMemoryMax();
  if (virtualMemoryMax !== undefined) {
    new Gauge({
      name: "process_virtual_memory_max_bytes",
      help: "Maximum amount of virtual memory available in bytes.",
      registers: [metrics],
    }).set(virtualMemoryMax);
  }
  new Gauge({
    name: "istiod_uptime_seconds",
    help: "Current istiod server uptime in seconds",
    registers: [metrics],
    collect() {
      this.set((Date.now() - startedAt) / 1000);
    },
  });
  // V8's external-memory figure (nodejs_external_memory_bytes) can lag far behind the Buffers freed:
  // with 2,000 unscoped sidecars at rest it read 1.2 GiB while the ArrayBuffers alive held 25 MiB.
  new Gauge({
    name: "sluiced_array_buffers_bytes",
    help: "Memory held by the ArrayBuffers (and so the Buffers) alive, as Node's allocator counts it.",
    registers: [metrics],
    collect() {
      this.set(process.memoryUsage().arrayBuffers);
    },
  });
  new Gauge({
    name: "pilot_info",
    help: "Pilot version and build information.",
    labelNames: ["version"],
    registers: [metrics],
  }).set({ version }, 1);
  // Istio's version.Info.RecordComponentBuildTag("pilot"): one, by the build's tag.
  new Gauge({
    name: "istio_build",
    help: "Istio component build info",
    labelNames: ["component", "tag"],
    registers: [metrics],
  }).set({ component: "pilot", tag: SLUICE_VERSION }, 1);
}

/**
 * istiod_managed_clusters{cluster_type}: the clusters whose registries are read (Istio's multicluster
 * controller): the local one, and the remote ones of the multicluster secrets, whose number the
 * returned function sets.
 */
export function registerManagedClusters(metrics: Registry): (remote: number) => void {
  const clusters =
    (metrics.getSingleMetric("istiod_managed_clusters") as Gauge<"cluster_type"> | undefined) ??
    new Gauge({
      name: "istiod_managed_clusters",
      help: "Number of clusters managed by istiod",
      labelNames: ["cluster_type"],
      registers: [metrics],
    });
  clusters.set({ cluster_type: "local" }, 1);
  clusters.set({ cluster_type: "remote" }, 0);
  return (remote) => clusters.set({ cluster_type: "remote" }, remote);
}

/** istiod's remote_cluster_sync_timeouts_total{cluster}: remote clusters that did not list within PILOT_REMOTE_CLUSTER_TIMEOUT. */
export function registerRemoteSyncTimeouts(metrics: Registry): (clusterId: string) => void {
  const timeouts =
    (metrics.getSingleMetric("remote_cluster_sync_timeouts_total") as Counter<"cluster"> | undefined) ??
    new Counter({
      name: "remote_cluster_sync_timeouts_total",
      help: "Remote clusters that had not listed when PILOT_REMOTE_CLUSTER_TIMEOUT ran out (the control plane became ready without them).",
      labelNames: ["cluster"],
      registers: [metrics],
    });
  return (clusterId) => timeouts.inc({ cluster: clusterId });
}
