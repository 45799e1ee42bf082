// Istio's push metrics (pilot/pkg/model/push_context.go UpdateMetrics) as gauges read at scrape
// time from the current push context: each metric counts the keys its push status has, and
// pilot_virt_services counts the VirtualServices the push knows.
import { Gauge, type Registry } from "prom-client";
import { type MeshPush, PUSH_METRICS, type PushMetric } from "../model/index.ts";

/** Registers the push status gauges on `registry` (once), over whatever push `current` gives. */
export function registerPushStatusMetrics(registry: Registry, current: () => MeshPush | undefined): void {
  const gauge = (name: string, help: string, value: (push: MeshPush) => number) => {
    if (registry.getSingleMetric(name)) return;
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const push = current();
        this.set(push ? value(push) : 0);
      },
    });
  };
  for (const [name, help] of Object.entries(PUSH_METRICS)) {
    gauge(name, help, (push) => push.status.count(name as PushMetric));
  }
  gauge(
    "pilot_virt_services",
    "Total virtual services known to pilot.",
    (push) => push.snapshot.virtualServices.all.length,
  );
}
