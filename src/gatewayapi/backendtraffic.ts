// XBackendTrafficPolicy → load balancing and retry budget for the Services it targets, and its status.
import type { ConfigObject } from "../config/index.ts";
import type { PolicyOutput } from "./backendtls.ts";
import type { ConditionSpec } from "./conditions.ts";
import {
  type AncestorRef,
  type AncestorStatus,
  ancestorStatus,
  type BackendPolicy,
  ignoredPolicyStatus,
  isIgnored,
  mergeAncestors,
  type RetryBudget,
  referenced,
  referenceKind,
} from "./destinationrule.ts";
import { formatDuration, parseDuration } from "./duration.ts";
import { MESH_CONTROLLER } from "./gatewayclass.ts";
import type { ClusterObjects } from "./model.ts";

/** The fields read from an XBackendTrafficPolicy: an experimental kind with no generated type (no schema here). */
interface TrafficPolicySpec {
  targetRefs?: { group: string; kind: string; name: string }[];
  sessionPersistence?: unknown;
  retryConstraint?: {
    budget?: { percent?: number; interval?: string };
    minRetryRate?: { count?: number; interval?: string };
  };
}

const DEFAULT_BUDGET_INTERVAL = 10_000_000_000n;
// Gateway API's default minimum retry rate.
const DEFAULT_MIN_RETRY_CONCURRENCY = 10;

function retryBudget(constraint: TrafficPolicySpec["retryConstraint"]): RetryBudget | undefined {
  if (!constraint) return undefined;
  const interval = constraint.budget?.interval ? parseDuration(constraint.budget.interval) : 0n;
  const budget: RetryBudget = {
    budgetInterval: formatDuration(interval || DEFAULT_BUDGET_INTERVAL),
    minRetryConcurrency: constraint.minRetryRate?.count ?? DEFAULT_MIN_RETRY_CONCURRENCY,
  };
  if (constraint.budget?.percent !== undefined) budget.percent = constraint.budget.percent;
  return budget;
}

export function convertBackendTrafficPolicy(
  policy: ConfigObject,
  cluster: ClusterObjects,
  domainSuffix: string,
): PolicyOutput {
  // No schema admitted it (see TrafficPolicySpec): the cast is the conversion's reading of the experimental kind.
  const spec = (policy.spec ?? {}) as TrafficPolicySpec;
  const refs = spec.targetRefs ?? [];
  const ancestorRef = (t: { group: string; kind: string; name: string }): AncestorRef => ({
    group: t.group,
    kind: t.kind,
    name: t.name,
  });
  if (isIgnored(policy)) return { policies: [], status: ignoredPolicyStatus(policy, refs.map(ancestorRef)) };
  const namespace = policy.metadata.namespace ?? "";
  const live = (policy.status ?? {}) as { ancestors?: AncestorStatus[] };
  const budget = retryBudget(spec.retryConstraint);
  const base: ConditionSpec = { reason: "Accepted", message: "Configuration is valid" };
  if (spec.sessionPersistence !== undefined) {
    base.message = "Configuration is valid, but Istio does not support the following fields: sessionPersistence";
  }
  const policies: BackendPolicy[] = [];
  const statuses: AncestorStatus[] = [];
  for (const target of refs) {
    const conditions: Record<string, ConditionSpec> = { Accepted: { ...base } };
    const kind = referenceKind(target);
    const obj = kind ? referenced(cluster, kind, `${namespace}/${target.name}`) : undefined;
    const error = !kind
      ? `unsupported kind ${target.kind}`
      : !obj
        ? `reference ${namespace}/${target.name} (of kind ${target.kind}) not found`
        : kind !== "Service"
          ? `unsupported reference kind: ${target.kind}`
          : undefined;
    if (error) {
      conditions.Accepted.error = { reason: "TargetNotFound", message: `targetRefs invalid: ${error}` };
    } else {
      policies.push({
        source: policy,
        targetKind: "Service",
        targetNamespace: namespace,
        targetName: target.name,
        host: `${target.name}.${namespace}.svc.${domainSuffix}`,
        loadBalancer: {},
        ...(budget ? { retryBudget: budget } : {}),
      });
    }
    statuses.push(
      ancestorStatus(
        ancestorRef(target),
        live.ancestors ?? [],
        policy.metadata.generation,
        conditions,
        MESH_CONTROLLER,
      ),
    );
  }
  return { policies, status: { ...live, ancestors: mergeAncestors(live.ancestors ?? [], statuses, 16) } };
}
