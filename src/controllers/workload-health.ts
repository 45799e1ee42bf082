// The `Healthy` condition istiod writes into a WorkloadEntry's status from what istio-agent reports on
// the ADS stream (pilot/pkg/autoregistration/internal/health, model/status); the registry reads it for
// entries annotated proxy.istio.io/health-checks-enabled.
import type { HealthReport } from "../xds/index.ts";

/** An istio.meta.v1alpha1.IstioCondition as protojson writes it: empty fields left out. */
export interface IstioCondition {
  type: string;
  status: string;
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export const HEALTHY = "Healthy";

/**
 * istiod's transformHealthEvent: status True, or False with the probe's message; no reason. Probe and
 * transition times are both the report's, since the agent reports transitions only.
 */
export function healthCondition(report: HealthReport, at: Date): IstioCondition {
  const time = protoTime(at);
  const status = report.healthy ? "True" : "False";
  const condition: IstioCondition = { type: HEALTHY, status, lastProbeTime: time, lastTransitionTime: time };
  if (!report.healthy && report.message) condition.message = report.message;
  return condition;
}

/** The entry's Healthy condition, if its status has one (the first, as istiod's GetCondition). */
export function storedHealth(status: unknown): IstioCondition | undefined {
  return conditionsOf(status).find((c) => c.type === HEALTHY);
}

/** `status` with `condition` in place of its condition of that type, else appended (UpdateIstioConfigCondition). */
export function withCondition(status: unknown, condition: IstioCondition): Record<string, unknown> {
  const conditions = [...conditionsOf(status)];
  const at = conditions.findIndex((c) => c.type === condition.type);
  if (at >= 0) conditions[at] = condition;
  else conditions.push(condition);
  return { ...(status as Record<string, unknown> | undefined), conditions };
}

/**
 * `status` without its conditions of `type` (DeleteIstioConfigCondition); the conditions field goes
 * when none is left, as istiod's protobuf status is written (an empty list is left out).
 */
export function withoutCondition(status: unknown, type: string): Record<string, unknown> {
  const conditions = conditionsOf(status).filter((c) => c.type !== type);
  const { conditions: _, ...rest } = (status ?? {}) as Record<string, unknown>;
  return conditions.length > 0 ? { ...rest, conditions } : rest;
}

function conditionsOf(status: unknown): readonly IstioCondition[] {
  return (status as { conditions?: IstioCondition[] } | undefined)?.conditions ?? [];
}

/** A google.protobuf.Timestamp as protojson writes it: UTC, the fraction in milliseconds unless zero. */
function protoTime(at: Date): string {
  return at.toISOString().replace(".000Z", "Z");
}
