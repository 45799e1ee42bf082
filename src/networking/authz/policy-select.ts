// Which AuthorizationPolicies apply to a sidecar workload, grouped by action (Istio's
// ListAuthorizationPolicies): policies of the root namespace and of the workload's namespace whose
// selector labels are a subset of the workload's. Policies with targetRef(s) attach to gateways and
// waypoints only, so a sidecar ignores them; a waypoint's are selected by the model and only grouped here.
import type { ConfigObject } from "../../config/index.ts";
import type { AuthorizationPolicySpec } from "../../config/types/index.ts";

/** A policy as the builder reads it. */
export interface AuthzPolicy {
  name: string;
  namespace: string;
  annotations: Readonly<Record<string, string>>;
  spec: AuthorizationPolicySpec;
}

export interface PoliciesByAction {
  custom: AuthzPolicy[];
  deny: AuthzPolicy[];
  allow: AuthzPolicy[];
  audit: AuthzPolicy[];
}

export interface SidecarWorkload {
  namespace: string;
  labels: Readonly<Record<string, string>>;
}

/**
 * The policies applying to `workload`. `policies` must be in creation order (the policy order);
 * `rootNamespace` policies apply to every namespace ("" for none).
 */
export function selectPolicies(
  policies: readonly ConfigObject<AuthorizationPolicySpec>[],
  workload: SidecarWorkload,
  rootNamespace: string,
): PoliciesByAction {
  const namespaces = [...new Set([rootNamespace, workload.namespace])];
  return groupPolicies(
    namespaces.flatMap((namespace) =>
      policies.filter(
        (object) =>
          (object.metadata.namespace ?? "") === namespace && appliesToSidecar(object.spec ?? {}, workload.labels),
      ),
    ),
  );
}

/**
 * Policies already selected (a waypoint's, by their targetRefs: the model's waypointAuthorizationPolicies),
 * in policy order, grouped by action.
 */
export function groupPolicies(policies: readonly ConfigObject<AuthorizationPolicySpec>[]): PoliciesByAction {
  const grouped: PoliciesByAction = { custom: [], deny: [], allow: [], audit: [] };
  for (const object of policies) {
    const spec = object.spec ?? {};
    const group = actionGroup(spec.action);
    if (!group) continue;
    grouped[group].push({
      name: object.metadata.name ?? "",
      namespace: object.metadata.namespace ?? "",
      annotations: object.metadata.annotations ?? {},
      spec,
    });
  }
  return grouped;
}

function appliesToSidecar(spec: AuthorizationPolicySpec, labels: Readonly<Record<string, string>>): boolean {
  if (spec.targetRef !== undefined || (spec.targetRefs?.length ?? 0) > 0) return false;
  const wanted = spec.selector?.matchLabels ?? {};
  return Object.entries(wanted).every(([key, value]) => labels[key] === value);
}

function actionGroup(action: AuthorizationPolicySpec["action"]): keyof PoliciesByAction | undefined {
  switch (action ?? "ALLOW") {
    case "ALLOW":
      return "allow";
    case "DENY":
      return "deny";
    case "AUDIT":
      return "audit";
    case "CUSTOM":
      return "custom";
  }
  return undefined;
}
