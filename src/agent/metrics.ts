// The agent's own Prometheus metrics under Istio's names (pilot/cmd/pilot-agent/metrics, registered
// with the `istio_agent_` prefix), plus the process metrics Istio's Go collectors stand for.
import { Counter, collectDefaultMetrics, Registry } from "prom-client";

export class AgentMetrics {
  readonly registry = new Registry();
  /** istio_agent_scrapes_total: every /stats/prometheus or /metrics request. */
  readonly scrapes: Counter;
  /** istio_agent_scrape_failures_total: scrapes of one source that failed, by source. */
  readonly scrapeFailures: Counter<"type">;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "istio_agent_" });
    this.scrapes = new Counter({ name: "istio_agent_scrapes_total", help: "The total number of scrapes.", registers });
    this.scrapeFailures = new Counter({
      name: "istio_agent_scrape_failures_total",
      help: "The total number of failed scrapes.",
      labelNames: ["type"],
      registers,
    });
  }
}
