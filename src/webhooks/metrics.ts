// The webhooks' Prometheus metrics under Istio's names (pkg/kube/inject/monitoring.go,
// pkg/webhooks/validation/server/monitoring.go), on a registry the caller owns.
import { Counter, Histogram, type Registry } from "prom-client";

/** Why a config was refused (or not checked), as Istio's galley_validation_failed `reason` label. */
export type ValidationFailure =
  | "unsupported_operation"
  | "yaml_decode_error"
  | "unknown_type"
  | "crd_conversion_error"
  | "invalid_resource";

type ResourceLabels = "group" | "version" | "resource";

export class WebhookMetrics {
  readonly injectionRequests: Counter;
  readonly injectionSuccess: Counter;
  readonly injectionFailure: Counter;
  readonly injectionSkip: Counter;
  readonly injectionTime: Histogram;
  readonly validationPassed: Counter<ResourceLabels>;
  readonly validationFailed: Counter<ResourceLabels | "reason">;
  readonly validationHttpError: Counter<"status">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.injectionRequests = new Counter({
      name: "sidecar_injection_requests_total",
      help: "Total number of sidecar injection requests.",
      registers,
    });
    this.injectionSuccess = new Counter({
      name: "sidecar_injection_success_total",
      help: "Total number of successful sidecar injection requests.",
      registers,
    });
    this.injectionFailure = new Counter({
      name: "sidecar_injection_failure_total",
      help: "Total number of failed sidecar injection requests.",
      registers,
    });
    this.injectionSkip = new Counter({
      name: "sidecar_injection_skip_total",
      help: "Total number of skipped sidecar injection requests.",
      registers,
    });
    this.injectionTime = new Histogram({
      name: "sidecar_injection_time_seconds",
      help: "Total time taken for injection in seconds.",
      buckets: [0.1, 1, 3, 5, 10, 20, 30, 60],
      registers,
    });
    this.validationPassed = new Counter({
      name: "galley_validation_passed",
      help: "Resource is valid",
      labelNames: ["group", "version", "resource"],
      registers,
    });
    this.validationFailed = new Counter({
      name: "galley_validation_failed",
      help: "Resource validation failed",
      labelNames: ["group", "version", "resource", "reason"],
      registers,
    });
    this.validationHttpError = new Counter({
      name: "galley_validation_http_error",
      help: "Resource validation http serve errors",
      labelNames: ["status"],
      registers,
    });
  }
}
