// Istio's counters of the events its Kubernetes informers see, under its names and labels:
// pilot_k8s_cfg_events (pilot/pkg/config/kube/crdclient: every Istio and Gateway API kind, `type` the
// kind) and pilot_k8s_reg_events (pilot/pkg/serviceregistry/kube/controller registerHandlers: the kinds
// the service registry watches, `type` as Istio names its handlers). `event` is add, update or delete.
// Sluice counts what its mirror writes to the store, which is what passed the namespace and revision
// filters, as Istio's filtered informers do.
import { Counter, type Registry } from "prom-client";
import type { KindInfo } from "../../config/index.ts";
import type { MirrorEvent } from "./mirror.ts";

/**
 * The registry handlers of each Kubernetes kind, by Istio's `type` label. A Namespace event reaches two
 * handlers (the system namespace's and the traffic-distribution one), each counting it.
 */
export const REGISTRY_EVENT_TYPES: Readonly<Record<string, readonly string[]>> = {
  Namespace: ["Namespaces", "Namespaces-TrafficDistribution"],
  Service: ["Services"],
  EndpointSlice: ["EndpointSlice"],
  Node: ["Nodes"],
  Pod: ["Pods"],
};

export class KubeEventMetrics {
  readonly config: Counter<"type" | "event">;
  readonly registry: Counter<"type" | "event">;

  constructor(registry: Registry) {
    this.config = new Counter({
      name: "pilot_k8s_cfg_events",
      help: "Events from k8s config.",
      labelNames: ["type", "event"],
      registers: [registry],
    });
    this.registry = new Counter({
      name: "pilot_k8s_reg_events",
      help: "Events from k8s registry.",
      labelNames: ["type", "event"],
      registers: [registry],
    });
  }

  /** Counts one event of a kind: config kinds by kind, registry kinds by handler; other Kubernetes kinds not at all. */
  record(kind: KindInfo, event: MirrorEvent): void {
    if (kind.family !== "kubernetes") {
      this.config.inc({ type: kind.kind, event });
      return;
    }
    if (kind.group !== "" && kind.group !== "discovery.k8s.io") return;
    for (const type of REGISTRY_EVENT_TYPES[kind.kind] ?? []) this.registry.inc({ type, event });
  }
}
