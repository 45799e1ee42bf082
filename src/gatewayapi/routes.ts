// What every route kind shares: binding to parents, converting the rules once for gateway parents and
// once for mesh parents, the route's status, and which listeners it counts as attached to.
import type { ConfigObject } from "../config/index.ts";
import type { BackendContext } from "./backends.ts";
import type { ClusterObjects, ConfigError } from "./model.ts";
import {
  boundReferences,
  isMesh,
  type ParentIndex,
  type ParentRef,
  type RouteParentReference,
  type RouteParentStatus,
  routeParentReferences,
  routeParentStatuses,
} from "./parents.ts";

/** Rules of one route converted for one kind of parent; `routes` is undefined after a hard error. */
export interface RulesResult<R> {
  routes?: R[];
  error?: ConfigError;
}

/** A converted rule: undefined `route` is a hard error that fails the whole route. */
export interface RuleResult<R> {
  route?: R;
  error?: ConfigError;
}

export function collectRules<R>(results: Iterable<RuleResult<R>>): RulesResult<R> {
  const routes: R[] = [];
  let error: ConfigError | undefined;
  for (const result of results) {
    if (result.route === undefined) return { error: result.error };
    if (result.error) error = result.error;
    routes.push(result.route);
  }
  return { routes, error };
}

export interface RouteContext extends BackendContext {
  parents: ParentIndex;
  cluster: ClusterObjects;
}

export interface ComputedRoute<R> {
  bound: RouteParentReference[];
  mesh: RulesResult<R>;
  gateway: RulesResult<R>;
  status: Record<string, unknown>;
}

export interface RouteSpecView {
  parentRefs?: readonly ParentRef[];
  hostnames?: readonly string[];
}

/** Binds a route to its parents, converts its rules (`mesh` selects mesh semantics) and computes its status. */
export function computeRoute<R>(
  route: ConfigObject<RouteSpecView>,
  ctx: RouteContext,
  convert: (mesh: boolean) => RulesResult<R>,
): ComputedRoute<R> {
  const refs = routeParentReferences(
    { route, parentRefs: route.spec?.parentRefs ?? [], hostnames: route.spec?.hostnames ?? [] },
    ctx.parents,
    ctx.cluster,
  );
  const needMesh = refs.some(isMesh);
  const needGateway = refs.some((r) => !isMesh(r));
  const mesh: RulesResult<R> = needMesh ? convert(true) : {};
  const gateway: RulesResult<R> = needGateway ? convert(false) : {};
  const live = (route.status ?? {}) as { parents?: RouteParentStatus[] };
  const parents = routeParentStatuses(refs, (r) => (isMesh(r) ? mesh.error : gateway.error), route, live.parents ?? []);
  return { bound: boundReferences(refs), mesh, gateway, status: { ...live, parents } };
}

/** "<ns>/<gateway>/<listener>" keys of the Gateway or ListenerSet listeners a route is attached to. */
export function attachments(bound: readonly RouteParentReference[]): string[] {
  return [
    ...new Set(
      bound
        .filter((r) => r.parentKind === "Gateway" || r.parentKind === "ListenerSet")
        .map((r) => `${r.parentKind}/${r.parentNamespace}/${r.parentName}/${r.sectionName}`),
    ),
  ];
}

/** The host a mesh (Service or ServiceEntry parent) route applies to. */
export function meshHosts(
  route: ConfigObject,
  ref: RouteParentReference,
  cluster: ClusterObjects,
  domainSuffix: string,
): string[] {
  const namespace = ref.originalReference.namespace ?? route.metadata.namespace ?? "";
  const name = ref.originalReference.name;
  if (ref.internalKind === "ServiceEntry") {
    const entry = cluster.serviceEntries.get(`${namespace}/${name}`);
    return [...(entry?.spec?.hosts ?? [])];
  }
  return [`${name}.${namespace}.svc.${domainSuffix}`];
}

/** Adds a mesh parent's port to every match of each route (a match on the port alone when it has none). */
export function withPortMatch<R extends { match?: { port?: number }[] }>(routes: readonly R[], port: number): R[] {
  return routes.map((r) => ({ ...r, match: r.match?.length ? r.match.map((m) => ({ ...m, port })) : [{ port }] }));
}
