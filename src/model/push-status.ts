// What went wrong while building one push (Istio's PushContext.ProxyStatus and its push metrics,
// pilot/pkg/model/push_context.go): the builders report each case under a metric name and a key,
// /debug/push_status shows them and the metrics are gauges of how many keys each metric has.
import { compareStrings } from "./config-meta.ts";

/** Istio's push metrics with their help texts, in Istio's order. */
export const PUSH_METRICS = {
  pilot_dns_cluster_without_endpoints:
    "DNS clusters without endpoints caused by the endpoint field in STRICT_DNS type cluster is not set or the corresponding subset cannot select any endpoint",
  endpoint_no_pod: "Endpoints without an associated pod.",
  pilot_no_ip: "Pods not found in the endpoint table, possibly invalid.",
  pilot_endpoint_not_ready: "Endpoint found in unready state.",
  pilot_conflict_outbound_listener_tcp_over_current_tcp:
    "Number of conflicting tcp listeners with current tcp listener.",
  pilot_conflict_inbound_listener: "Number of conflicting inbound listeners.",
  pilot_duplicate_envoy_clusters: "Duplicate envoy clusters caused by service entries with same hostname",
  pilot_eds_no_instances: "Number of clusters without instances.",
  pilot_vservice_dup_domain: "Virtual services with dup domains.",
  pilot_destrule_subsets: "Duplicate subsets across destination rules for same host",
} as const;

export type PushMetric = keyof typeof PUSH_METRICS;

/** One reported case (Istio's ProxyPushStatus; empty fields are left out of its JSON). */
export interface ProxyPushStatus {
  proxy?: string;
  message?: string;
}

/** How a builder reports a case; the proxy being built is bound by the caller. */
export type PushStatusReporter = (metric: PushMetric, key: string, message?: string) => void;

/** The cases reported during one push, by metric then key (a later case for a key replaces the earlier). */
export class PushStatus {
  readonly #byMetric = new Map<PushMetric, Map<string, ProxyPushStatus>>();

  add(metric: PushMetric, key: string, proxy = "", message = ""): void {
    let cases = this.#byMetric.get(metric);
    if (!cases) {
      cases = new Map();
      this.#byMetric.set(metric, cases);
    }
    cases.set(key, { ...(proxy ? { proxy } : {}), ...(message ? { message } : {}) });
  }

  /** Adds every case of `other`, replacing this status's case under the same metric and key (as `add` does). */
  merge(other: PushStatus): void {
    for (const [metric, cases] of other.#byMetric) {
      for (const [key, status] of cases) this.add(metric, key, status.proxy, status.message);
    }
  }

  /** Adds every case of `earlier` this status has no case for under the same metric and key. */
  carryOver(earlier: PushStatus): void {
    for (const [metric, cases] of earlier.#byMetric) {
      for (const [key, status] of cases) {
        if (!this.#byMetric.get(metric)?.has(key)) this.add(metric, key, status.proxy, status.message);
      }
    }
  }

  /** A reporter whose cases name `proxyId`. */
  reporter(proxyId: string): PushStatusReporter {
    return (metric, key, message) => this.add(metric, key, proxyId, message);
  }

  /** How many keys `metric` has (the value of its gauge). */
  count(metric: PushMetric): number {
    return this.#byMetric.get(metric)?.size ?? 0;
  }

  /** Istio's ProxyStatus JSON: metric → key → case, only metrics with cases; keys sorted as Go sorts map keys. */
  toJSON(): Record<string, Record<string, ProxyPushStatus>> {
    const out: Record<string, Record<string, ProxyPushStatus>> = {};
    for (const metric of [...this.#byMetric.keys()].sort(compareStrings)) {
      const cases = this.#byMetric.get(metric) ?? new Map<string, ProxyPushStatus>();
      out[metric] = Object.fromEntries([...cases].sort(([a], [b]) => compareStrings(a, b)));
    }
    return out;
  }
}
