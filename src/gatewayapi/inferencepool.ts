// InferencePool status: one parent per Gateway that, by the live statuses of the HTTPRoutes using the
// pool, accepted such a route; Accepted mirrors that route status, ResolvedRefs checks the endpoint picker.
import type { ConfigObject, gatewayapi } from "../config/index.ts";
import { type Condition, type ConditionSpec, setConditions } from "./conditions.ts";
import { BUILTIN_CLASSES, GATEWAY_CONTROLLER, UNMANAGED_CONTROLLER } from "./gatewayclass.ts";
import type { ClusterObjects } from "./model.ts";
import { GATEWAY_GROUP } from "./model.ts";

// Route parents written by these controllers count (the classes that exist without ambient features).
const SUPPORTED_CONTROLLERS = new Set([GATEWAY_CONTROLLER, UNMANAGED_CONTROLLER]);

interface PoolParentRef {
  group?: string;
  kind: string;
  namespace?: string;
  name: string;
}

interface PoolParentStatus {
  parentRef: PoolParentRef;
  conditions?: Condition[];
  [key: string]: unknown;
}

interface RouteParentStatus {
  parentRef: { name: string; namespace?: string };
  controllerName: string;
  conditions?: { type: string; status: string; message: string }[];
}

interface RouteView {
  route: ConfigObject;
  parents: RouteParentStatus[];
}

function referencesPool(route: gatewayapi.HTTPRoute, pool: ConfigObject): boolean {
  return (route.spec?.rules ?? []).some((rule) =>
    (rule.backendRefs ?? []).some(
      (ref) =>
        ref.group === "inference.networking.k8s.io" &&
        ref.kind === "InferencePool" &&
        ref.name === pool.metadata.name &&
        (ref.namespace || route.metadata.namespace) === pool.metadata.namespace,
    ),
  );
}

/** Our route parents as "ns/name" of the Gateway. */
function ourParents(view: RouteView): { key: string; status: RouteParentStatus }[] {
  return view.parents
    .filter((p) => SUPPORTED_CONTROLLERS.has(p.controllerName))
    .map((status) => ({
      key: `${status.parentRef.namespace || view.route.metadata.namespace}/${status.parentRef.name}`,
      status,
    }));
}

function acceptedCondition(gateway: string, routes: readonly RouteView[]): ConditionSpec {
  for (const view of routes) {
    const parent = ourParents(view).find((p) => p.key === gateway);
    if (!parent) continue;
    const accepted = (parent.status.conditions ?? []).find((c) => c.type === "Accepted");
    if (!accepted) {
      return {
        reason: "Accepted",
        status: "Unknown",
        message: "Referenced by an HTTPRoute unknown parentRef Gateway status",
      };
    }
    if (accepted.status === "True") {
      return { reason: "Accepted", message: "Referenced by an HTTPRoute accepted by the parentRef Gateway" };
    }
    return {
      reason: "HTTPRouteNotAccepted",
      status: "False",
      message: `Referenced HTTPRoute ${view.route.metadata.namespace}/${view.route.metadata.name} not accepted by Gateway ${gateway}: ${accepted.message}`,
    };
  }
  return {
    reason: "HTTPRouteNotAccepted",
    status: "False",
    message: `No HTTPRoute found referencing this InferencePool with Gateway ${gateway} as parent`,
  };
}

function resolvedRefsCondition(pool: ConfigObject, cluster: ClusterObjects): ConditionSpec {
  // InferencePool has no generated type (Sluice has no schema for it): this is the one field read from it.
  const picker = (pool.spec as { endpointPickerRef?: { kind?: string; name?: string } } | undefined)?.endpointPickerRef;
  const kind = picker?.kind || "Service";
  const invalid = (message: string): ConditionSpec => ({ reason: "InvalidExtensionRef", status: "False", message });
  if (kind !== "Service") return invalid(`Unsupported ExtensionRef kind ${kind}`);
  if (!picker?.name) return invalid("ExtensionRef not defined");
  if (!cluster.services.has(`${pool.metadata.namespace}/${picker.name}`)) {
    return invalid(`Referenced ExtensionRef not found ${picker.name}`);
  }
  return { reason: "ResolvedRefs", message: "Referenced ExtensionRef resolved successfully" };
}

// A Gateway of a built-in class is ours even when no route of ours points at the pool any more.
function ourGateway(cluster: ClusterObjects, key: string): boolean {
  const className = cluster.gateways.get(key)?.spec?.gatewayClassName;
  return className !== undefined && BUILTIN_CLASSES.has(className);
}

/** The HTTPRoutes routing to the pool, with their parents' live statuses. */
function poolRoutes(pool: ConfigObject, httpRoutes: readonly gatewayapi.HTTPRoute[]): RouteView[] {
  return httpRoutes
    .filter((route) => referencesPool(route, pool))
    .map((route) => ({ route, parents: ((route.status ?? {}) as { parents?: RouteParentStatus[] }).parents ?? [] }));
}

/** The Gateways ("ns/name") of our classes whose status of an HTTPRoute routing to the pool names them. */
function poolGateways(routes: readonly RouteView[]): Set<string> {
  return new Set(routes.flatMap((view) => ourParents(view).map((p) => p.key)));
}

/** Whether one of our Gateways is a parent of an HTTPRoute to the pool: istiod then makes its shadow Service. */
export function hasGatewayParent(pool: ConfigObject, httpRoutes: readonly gatewayapi.HTTPRoute[]): boolean {
  return poolGateways(poolRoutes(pool, httpRoutes)).size > 0;
}

export function inferencePoolStatus(
  pool: ConfigObject,
  httpRoutes: readonly gatewayapi.HTTPRoute[],
  cluster: ClusterObjects,
): Record<string, unknown> {
  const routes = poolRoutes(pool, httpRoutes);
  const gateways = poolGateways(routes);
  const live = ((pool.status ?? {}) as { parents?: PoolParentStatus[] }).parents ?? [];
  const parentKey = (p: PoolParentStatus) => `${p.parentRef.namespace || pool.metadata.namespace}/${p.parentRef.name}`;
  const parents: PoolParentStatus[] = live.filter(
    (p) =>
      !gateways.has(parentKey(p)) &&
      !ourGateway(cluster, parentKey(p)) &&
      !(p.parentRef.kind === "Status" && p.parentRef.name === "default"),
  );
  for (const gateway of gateways) {
    const [namespace, name] = gateway.split("/");
    const existing = live.find((p) => p.parentRef.name === name && (p.parentRef.namespace ?? "") === namespace);
    const kept = (existing?.conditions ?? []).filter((c) => c.type === "Accepted" || c.type === "ResolvedRefs");
    parents.push({
      parentRef: { group: GATEWAY_GROUP, kind: "Gateway", namespace, name },
      conditions: setConditions(pool.metadata.generation, kept, {
        Accepted: acceptedCondition(gateway, routes),
        ResolvedRefs: resolvedRefsCondition(pool, cluster),
      }),
    });
  }
  return parents.length > 0 ? { parents } : {};
}
