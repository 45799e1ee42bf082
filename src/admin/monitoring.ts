// What /metrics adds to the process's registry (Istio's pilot/pkg/bootstrap/monitoring.go and the
// monitoring of pilot/pkg/xds): the Node process metrics, istiod_uptime_seconds and pilot_info.
import { collectDefaultMetrics, Gauge, type Registry } from "prom-client";

const startedAt = Date.now();

/** Registers the process metrics, uptime and build info on `metrics`, once per registry. */
export function registerMonitoringMetrics(metrics: Registry, version: string): void {
  if (metrics.getSingleMetric("istiod_uptime_seconds")) return;
  collectDefaultMetrics({ register: metrics });
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
}
