// Kubernetes status conditions as Istio sets them: each wanted condition is merged into the live list,
// keeping a condition (and its transition time) that did not change.
import type { ConfigError } from "./model.ts";

export type ConditionStatus = "True" | "False" | "Unknown";

export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** A wanted condition: success reason/message, or `error`, which inverts the status. */
export interface ConditionSpec {
  reason: string;
  message: string;
  /** Status on success; "True" when unset. */
  status?: ConditionStatus;
  error?: ConfigError;
  /** Only set the condition if absent or still carrying this (default) reason. */
  setOnce?: string;
}

/** Marks a condition that changes now; the conversion stamps the actual time on its way out. */
export const TRANSITION_TIME = "";

/** Applies `wanted` (in sorted type order) to `existing`, as Istio's SetListenerConditions. */
export function setConditions(
  generation: number | undefined,
  existing: readonly Condition[],
  wanted: Readonly<Record<string, ConditionSpec>>,
): Condition[] {
  let conditions = [...existing];
  for (const type of Object.keys(wanted).sort()) {
    const spec = wanted[type];
    const condition: Condition = spec.error
      ? {
          type,
          status: invert(spec.status),
          lastTransitionTime: TRANSITION_TIME,
          reason: spec.error.reason,
          message: spec.error.message,
        }
      : {
          type,
          status: spec.status ?? "True",
          lastTransitionTime: TRANSITION_TIME,
          reason: spec.reason,
          message: spec.message,
        };
    if (generation) condition.observedGeneration = generation;
    conditions =
      spec.setOnce !== undefined
        ? createCondition(conditions, condition, spec.setOnce)
        : updateConditionIfChanged(conditions, condition);
  }
  return conditions;
}

function invert(status: ConditionStatus | undefined): ConditionStatus {
  return status === "False" ? "True" : "False";
}

/** Replaces the condition of the same type unless only its time would change. */
function updateConditionIfChanged(conditions: readonly Condition[], condition: Condition): Condition[] {
  const index = conditions.findIndex((c) => c.type === condition.type);
  if (index === -1) return [...conditions, condition];
  const current = conditions[index];
  let next = condition;
  if (current.status === condition.status) {
    if (current.message === condition.message && current.observedGeneration === condition.observedGeneration) {
      return [...conditions];
    }
    next = { ...condition, lastTransitionTime: current.lastTransitionTime };
  }
  return conditions.map((c, i) => (i === index ? next : c));
}

function createCondition(conditions: readonly Condition[], condition: Condition, unsetReason: string): Condition[] {
  const index = conditions.findIndex((c) => c.type === condition.type);
  if (index === -1) return [...conditions, condition];
  if (conditions[index].reason === unsetReason) return conditions.map((c, i) => (i === index ? condition : c));
  return [...conditions];
}

/** Replaces every unstamped lastTransitionTime below `value` with `now`. */
export function stampTransitionTimes<T>(value: T, now: string): T {
  if (Array.isArray(value)) return value.map((v) => stampTransitionTimes(v, now)) as T;
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === "lastTransitionTime" && v === TRANSITION_TIME ? now : stampTransitionTimes(v, now),
    ]),
  ) as T;
}
