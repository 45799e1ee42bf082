// The push pipeline's Prometheus metrics under Istio's names (pilot/pkg/xds/monitoring.go), on a
// registry the caller owns.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export class PipelineMetrics {
  /** pilot_debounce_time: from the first merged change until its push context is built and queued. */
  readonly debounceTime: Histogram;
  readonly pushContextInit: Histogram;
  /** pilot_push_triggers: pushes by reason (each merged change counts once). */
  readonly pushTriggers: Counter<"type">;
  /** pilot_inbound_updates: changes received, by type (config, eds, svc, svcdelete). */
  readonly inboundUpdates: Counter<"type">;
  readonly services: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.debounceTime = new Histogram({
      name: "pilot_debounce_time",
      help: "Delay in seconds between the first config enters debouncing and the merged push request is pushed into the push queue (includes pushcontext_init_seconds).",
      buckets: [0.01, 0.1, 0.5, 1, 3, 5, 10, 20, 30],
      registers,
    });
    this.pushContextInit = new Histogram({
      name: "pilot_pushcontext_init_seconds",
      help: "Total time in seconds Pilot takes to init pushContext.",
      buckets: [0.01, 0.1, 0.5, 1, 3, 5],
      registers,
    });
    this.pushTriggers = new Counter({
      name: "pilot_push_triggers",
      help: "Total number of times a push was triggered, labeled by reason for the push.",
      labelNames: ["type"],
      registers,
    });
    this.inboundUpdates = new Counter({
      name: "pilot_inbound_updates",
      help: "Total number of updates received by pilot.",
      labelNames: ["type"],
      registers,
    });
    this.services = new Gauge({ name: "pilot_services", help: "Total services known to pilot.", registers });
  }
}
