// What ambient mode writes back to the objects it reads (Istio's ambient status, AMBIENT_ENABLE_STATUS):
// whether a Service, a ServiceEntry or a WorkloadEntry is bound to the waypoint it names
// (`istio.io/WaypointBound`), whether a wildcard ServiceEntry lacks the waypoint it needs
// (`istio.io/WaypointMissing`), whether ztunnel enforces an AuthorizationPolicy (`ZtunnelAccepted`) and
// whether a policy's targetRefs bind it to waypoints (`WaypointAccepted`). Each writer (Istio's field
// manager) reports, for each object it has one for, every condition type it owns: a condition, or null
// when one it wrote before must go. The controllers' ambient status writer writes them.
import type { ConfigObject } from "../config/index.ts";
import type { AuthorizationPolicy, TargetRef } from "../config/types/index.ts";
import type { Collection, FetchContext, Labels } from "../krt/index.ts";
import { derive } from "../krt/index.ts";
import type { ServiceInfo, StatusMessage, WorkloadInfo } from "./model.ts";
import type { ZtunnelBinding } from "./policies.ts";
import {
  boundWaypoint,
  ingressUseWaypoint,
  isManagedGateway,
  type WaypointSources,
  type WaypointStatus,
  waypointKey,
  workloadWaypoint,
} from "./waypoints.ts";

export const WAYPOINT_BOUND = "istio.io/WaypointBound";
export const WAYPOINT_MISSING = "istio.io/WaypointMissing";
export const VISIBILITY_APPLIED = "istio.io/VisibilityApplied";
export const ZTUNNEL_ACCEPTED = "ZtunnelAccepted";
export const WAYPOINT_ACCEPTED = "WaypointAccepted";
/** The controller of the GatewayClasses whose Gateways are waypoints. */
const MESH_CONTROLLER = "istio.io/mesh-controller";

/** One condition as a writer owns it (Istio's model.Condition; its time is set when it is written). */
export interface Condition {
  status: boolean;
  reason: string;
  message: string;
  /** 0: none (Kubernetes objects' conditions carry none). */
  observedGeneration: number;
}

/** The object a status is written to. */
export interface StatusTarget {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** One writer's conditions for one object: each type it owns, null when it must not be there. */
export interface StatusReport {
  /** Its key in its collection (a service's `namespace/hostname`, an object's `namespace/name`, a workload's uid). */
  key: string;
  target: StatusTarget;
  conditions: Readonly<Record<string, Condition | null>>;
}

/** A writer of conditions, by the field manager it writes as (Istio's reporter names). */
export interface StatusReporter {
  fieldManager: string;
  reports: Collection<StatusReport>;
}

/** What the status collections read beside the index's own collections. */
export interface StatusSources extends WaypointSources {
  /** Istio's cluster ID: a WorkloadEntry's workload uid starts with it. */
  clusterId: string;
  services: Collection<ConfigObject>;
  serviceEntries: Collection<ConfigObject>;
  workloadEntries: Collection<ConfigObject>;
  namespaces: Collection<ConfigObject>;
  authorizationPolicies: Collection<AuthorizationPolicy>;
  gatewayClasses: Collection<ConfigObject>;
  rootNamespace: () => string;
}

const SERVICE_API = { Service: "v1", ServiceEntry: "networking.istio.io/v1" } as const;

/**
 * The waypoint binding of a Service or ServiceEntry as its status tells it (Istio's services.go): the
 * waypoint's name and how ingress traffic takes it, or why it has none.
 */
export function serviceWaypointStatus(
  ctx: FetchContext,
  sources: WaypointSources,
  object: ConfigObject,
): WaypointStatus & { ingressUseWaypoint: boolean; ingressLabelPresent: boolean } {
  const namespace = object.metadata.namespace ?? "";
  const labels = object.metadata.labels ?? {};
  const none = { ingressUseWaypoint: false, ingressLabelPresent: false };
  if (isManagedGateway(labels)) return none;
  const { waypoint, error } = boundWaypoint(ctx, sources, namespace, labels, "service");
  if (!waypoint) return error ? { ...none, error } : none;
  const namespaceLabels = ctx.fetchIndex(sources.namespacesByName, namespace)[0]?.metadata.labels ?? {};
  const ingress = ingressUseWaypoint(labels, namespaceLabels);
  return { name: waypointKey(waypoint), ingressUseWaypoint: ingress.use, ingressLabelPresent: ingress.present };
}

/**
 * A sent service's conditions (Istio's ServiceInfo.GetConditions): bound to its waypoint, or why not;
 * a wildcard ServiceEntry without one is missing it, and so is one that `racesConnect` (annotated
 * `istio.io/connect-strategy: RACE_FIRST_TCP_CONNECT`). Istio removes a WaypointMissing it finds on any
 * service and writes no VisibilityApplied while the mesh sets no serviceEntryVisibility (Sluice has none).
 */
export function serviceConditions(
  source: ServiceInfo["source"]["kind"],
  hostname: string,
  binding: ReturnType<typeof serviceWaypointStatus>,
  racesConnect: boolean,
): Record<string, Condition | null> {
  const conditions: Record<string, Condition | null> = { [WAYPOINT_BOUND]: null, [WAYPOINT_MISSING]: null };
  if (source === "ServiceEntry") conditions[VISIBILITY_APPLIED] = null;
  if (binding.name) {
    let message = `Successfully attached to waypoint ${binding.name}`;
    if (binding.ingressUseWaypoint) message += ". Ingress traffic will traverse the waypoint";
    else if (binding.ingressLabelPresent)
      message +=
        ". Ingress traffic is not using the waypoint, set the istio.io/ingress-use-waypoint label to true if desired.";
    conditions[WAYPOINT_BOUND] = { status: true, reason: WAYPOINT_ACCEPTED, message, observedGeneration: 0 };
    return conditions;
  }
  if (binding.error) conditions[WAYPOINT_BOUND] = unbound(binding.error);
  if (source === "ServiceEntry" && hostname.startsWith("*")) {
    conditions[WAYPOINT_MISSING] = {
      status: true,
      reason: "NoWaypointForWildcardService",
      message: "ServiceEntry will not apply until it is bound to a valid waypoint.",
      observedGeneration: 0,
    };
  }
  // Said after (so instead of) the wildcard's, as Istio.
  if (source === "ServiceEntry" && racesConnect) {
    conditions[WAYPOINT_MISSING] = {
      status: true,
      reason: "NoWaypointForRacingConnectStrategy",
      message:
        "ServiceEntry has a non-default connect strategy but no waypoint bound. A waypoint is required for connect strategies to take effect for ambient clients.",
      observedGeneration: 0,
    };
  }
  return conditions;
}

/** A WorkloadEntry's conditions (Istio's WorkloadInfo.GetConditions). */
export function workloadConditions(binding: WaypointStatus): Record<string, Condition | null> {
  if (binding.name) {
    return {
      [WAYPOINT_BOUND]: {
        status: true,
        reason: WAYPOINT_ACCEPTED,
        message: `Successfully attached to waypoint ${binding.name}`,
        observedGeneration: 0,
      },
    };
  }
  return { [WAYPOINT_BOUND]: binding.error ? unbound(binding.error) : null };
}

function unbound(error: StatusMessage): Condition {
  return { status: false, reason: error.reason, message: error.message, observedGeneration: 0 };
}

/** How ztunnel takes an AuthorizationPolicy (Istio's WorkloadAuthorization.GetConditions). */
export function ztunnelConditions(binding: ZtunnelBinding): Record<string, Condition | null> {
  return {
    [ZTUNNEL_ACCEPTED]: {
      status: binding.authorization !== undefined,
      reason: binding.status?.reason ?? "Accepted",
      message: binding.status?.message ?? "attached to ztunnel",
      observedGeneration: binding.generation,
    },
  };
}

/** One targetRef of a waypoint policy: what it names (Istio's Ancestor), bound or why not. */
export interface PolicyTargetBinding {
  ancestor: string;
  bound: boolean;
  reason: string;
  message: string;
}

/** The targetRefs of a policy (its targetRefs, else its targetRef). */
function targetRefsOf(policy: AuthorizationPolicy): TargetRef[] {
  const refs = policy.spec?.targetRefs ?? [];
  return refs.length === 0 && policy.spec?.targetRef ? [policy.spec.targetRef] : refs;
}

/** Whether each targetRef of a waypoint policy binds it (Istio's WaypointPolicyStatusCollection). */
export function policyTargetBindings(
  ctx: FetchContext,
  sources: StatusSources,
  policy: AuthorizationPolicy,
): PolicyTargetBinding[] {
  const rootNamespace = sources.rootNamespace();
  return targetRefsOf(policy).map((target) => {
    const namespace = target.namespace || (policy.metadata.namespace ?? "");
    const key = `${namespace}/${target.name}`;
    const ancestor = `${target.kind}.${target.group || "core"}:${key}`;
    const notBound = (reason: string, message: string) => ({ ancestor, bound: false, reason, message });
    const boundTo = (name: string) => ({ ancestor, bound: true, reason: "Accepted", message: `bound to ${name}` });
    const serviceWaypoint = (object: ConfigObject) => serviceWaypointStatus(ctx, sources, object).name;
    switch (target.kind) {
      case "GatewayClass": {
        if (namespace !== rootNamespace)
          return notBound(
            "Invalid",
            `AuthorizationPolicy must be in the root namespace \`${rootNamespace}\` when referencing a GatewayClass`,
          );
        const gatewayClass = ctx.fetch(sources.gatewayClasses, { key: target.name })[0];
        if (!gatewayClass) return notBound("TargetNotFound", "not bound");
        if ((gatewayClass.spec as { controllerName?: string } | undefined)?.controllerName !== MESH_CONTROLLER)
          return notBound("Invalid", `GatewayClass must use controller name \`${MESH_CONTROLLER}\` for waypoints`);
        return boundTo(target.name);
      }
      case "Gateway":
        return ctx.fetch(sources.waypoints, { key }).length === 1
          ? boundTo(key)
          : notBound("TargetNotFound", "not bound");
      case "Service":
      case "ServiceEntry": {
        const objects = ctx.fetch(target.kind === "Service" ? sources.services : sources.serviceEntries, { key });
        const object = objects.length === 1 ? objects[0] : undefined;
        if (!object) return notBound("TargetNotFound", `${target.kind} ${key} was not found`);
        const waypoint = serviceWaypoint(object);
        return waypoint
          ? boundTo(waypoint)
          : notBound("AncestorNotBound", `${target.kind} ${key} is not bound to a waypoint`);
      }
      default:
        return notBound("unknown", "not bound");
    }
  });
}

/**
 * A waypoint policy's one condition (Istio's flattenConditions): its one targetRef's binding, else
 * Accepted when all bind, PartiallyInvalid when some do, Invalid when none does, naming those that do not.
 */
export function waypointPolicyConditions(
  generation: number,
  targets: readonly PolicyTargetBinding[],
): Record<string, Condition | null> {
  const [only] = targets;
  if (targets.length === 1 && only) {
    return {
      [WAYPOINT_ACCEPTED]: {
        status: only.bound,
        reason: only.reason,
        message: only.message,
        observedGeneration: generation,
      },
    };
  }
  const unbound = targets.filter((t) => !t.bound).map((t) => t.ancestor);
  const anyBound = targets.some((t) => t.bound);
  const reason = !anyBound ? "Invalid" : unbound.length > 0 ? "PartiallyInvalid" : "Accepted";
  return {
    [WAYPOINT_ACCEPTED]: {
      status: anyBound,
      reason,
      message: unbound.length > 0 ? `Invalid targetRefs: ${unbound.join(", ")}` : "",
      observedGeneration: generation,
    },
  };
}

/** `istio.io/connect-strategy: RACE_FIRST_TCP_CONNECT` (any case), Istio's one non-default DNS connect strategy. */
function racesConnect(object: ConfigObject): boolean {
  return (object.metadata.annotations?.["istio.io/connect-strategy"] ?? "").toUpperCase() === "RACE_FIRST_TCP_CONNECT";
}

const reportOptions = (name: string) => ({ name, keyOf: (r: StatusReport) => r.key });

/**
 * The ambient writers of status and what each reports (Istio's statusqueue registrations in
 * ambientindex.go): services (of the services sent, each of its object), ztunnel's and waypoints'
 * AuthorizationPolicies, and WorkloadEntries.
 */
export function statusReporters(
  sources: StatusSources,
  collections: {
    services: Collection<ServiceInfo>;
    workloads: Collection<WorkloadInfo>;
    ztunnelBindings: Collection<ZtunnelBinding>;
  },
): StatusReporter[] {
  const services = derive(
    collections.services,
    (ctx, service): StatusReport | undefined => {
      const { kind, name } = service.source;
      const objects = kind === "Service" ? sources.services : sources.serviceEntries;
      const object = ctx.fetch(objects, { key: `${service.namespace}/${name}` })[0];
      if (!object) return undefined;
      return {
        key: service.name,
        target: { apiVersion: SERVICE_API[kind], kind, namespace: service.namespace, name },
        conditions: serviceConditions(
          kind,
          service.service.hostname,
          serviceWaypointStatus(ctx, sources, object),
          racesConnect(object),
        ),
      };
    },
    reportOptions("ambient/service-status"),
  );
  const ztunnelPolicies = derive(
    collections.ztunnelBindings,
    (_ctx, binding): StatusReport | undefined =>
      binding.authorization || binding.status
        ? {
            key: `${binding.namespace}/${binding.name}`,
            target: policyTarget(binding),
            conditions: ztunnelConditions(binding),
          }
        : undefined,
    reportOptions("ambient/ztunnel-policy-status"),
  );
  const waypointPolicies = derive(
    sources.authorizationPolicies,
    (ctx, policy): StatusReport | undefined => {
      if (targetRefsOf(policy).length === 0) return undefined;
      const target = policyTarget({ namespace: policy.metadata.namespace ?? "", name: policy.metadata.name ?? "" });
      return {
        key: `${target.namespace}/${target.name}`,
        target,
        conditions: waypointPolicyConditions(
          policy.metadata.generation ?? 0,
          policyTargetBindings(ctx, sources, policy),
        ),
      };
    },
    reportOptions("ambient/waypoint-policy-status"),
  );
  // Of the workloads, only WorkloadEntries' have a status.
  const workloadEntries = derive(
    sources.workloadEntries,
    (ctx, entry): StatusReport | undefined => {
      const { name = "", namespace = "" } = entry.metadata;
      const uid = `${sources.clusterId}/networking.istio.io/WorkloadEntry/${namespace}/${name}`;
      if (!ctx.fetch(collections.workloads, { key: uid })[0]) return undefined;
      // The labels the index binds it by: the spec's under the object's.
      const labels = { ...(entry.spec as { labels?: Labels } | undefined)?.labels, ...entry.metadata.labels };
      return {
        key: uid,
        target: { apiVersion: "networking.istio.io/v1", kind: "WorkloadEntry", namespace, name },
        conditions: workloadConditions(workloadWaypoint(ctx, sources, namespace, labels).binding),
      };
    },
    reportOptions("ambient/workload-entry-status"),
  );
  return [
    { fieldManager: "istio-ambient-service", reports: services },
    { fieldManager: "istio-ambient-ztunnel-policy", reports: ztunnelPolicies },
    { fieldManager: "istio-ambient-waypoint-policy", reports: waypointPolicies },
    { fieldManager: "istio-ambient-workloadentry", reports: workloadEntries },
  ];
}

function policyTarget(policy: { namespace: string; name: string }): StatusTarget {
  return {
    apiVersion: "security.istio.io/v1",
    kind: "AuthorizationPolicy",
    namespace: policy.namespace,
    name: policy.name,
  };
}
