// Route → parent binding: which listeners (or the mesh) a route's parentRefs select, whether each
// admits the route, and the per-parent route status Istio writes.
import type { ConfigObject } from "../config/index.ts";
import { hostSubsetOf, hostsMatch } from "../util/index.ts";
import { type Condition, type ConditionSpec, setConditions } from "./conditions.ts";
import { GATEWAY_CONTROLLER, MESH_CONTROLLER } from "./gatewayclass.ts";
import type { ClusterObjects, ConfigError, ParentInfo } from "./model.ts";
import { GATEWAY_GROUP, groupBy } from "./model.ts";
import { parentRefString } from "./naming.ts";

export interface ParentRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  sectionName?: string;
  port?: number;
}

export type ParentErrorReason = "NoMatchingParent" | "NotAllowedByListeners" | "NoMatchingListenerHostname";

export interface ParentError {
  reason: ParentErrorReason;
  message: string;
}

/** One (parentRef, listener) pair a route may bind to. */
export interface RouteParentReference {
  internalName: string;
  /** "Gateway", "ListenerSet", "Service" or "ServiceEntry". */
  internalKind: string;
  /** The listener hostname ("" when unset). */
  hostname: string;
  deniedReason?: ParentError;
  originalReference: ParentRef;
  bannedHostnames: ReadonlySet<string>;
  parentKind: string;
  parentNamespace: string;
  parentName: string;
  sectionName: string;
}

export function isMesh(ref: RouteParentReference): boolean {
  return ref.internalName === "mesh";
}

const MESH_PARENT: ParentInfo = {
  internalName: "mesh",
  parentKind: "Mesh",
  parentNamespace: "",
  parentName: "istio",
  allowedKinds: ["HTTPRoute", "GRPCRoute", "TCPRoute", "TLSRoute"].map((kind) => ({ group: GATEWAY_GROUP, kind })),
  hostnames: [],
  originalHostname: "",
  sectionName: "",
  port: 0,
  protocol: "",
};

/** Listeners by the object routes reference: "<Kind>/<ns>/<name>". */
export type ParentIndex = ReadonlyMap<string, readonly ParentInfo[]>;

/** "Gateway", "ListenerSet", "Service", "ServiceEntry" for supported parent kinds. */
function parentKind(ref: ParentRef): string | undefined {
  const group = ref.group ?? GATEWAY_GROUP;
  const kind = ref.kind ?? "Gateway";
  if (group === GATEWAY_GROUP && (kind === "Gateway" || kind === "ListenerSet")) return kind;
  if ((group === "" || group === "core") && kind === "Service") return "Service";
  if (group === "networking.istio.io" && kind === "ServiceEntry") return "ServiceEntry";
  return undefined;
}

export interface RouteInfo {
  route: ConfigObject;
  parentRefs: readonly ParentRef[];
  hostnames: readonly string[];
}

const WAYPOINT_LABEL = "istio.io/use-waypoint";

/** Every (parentRef, listener) pair of a route, sorted by parentRef, each with why it is denied (if it is). */
export function routeParentReferences(
  info: RouteInfo,
  parents: ParentIndex,
  cluster: ClusterObjects,
): RouteParentReference[] {
  const localNamespace = info.route.metadata.namespace ?? "";
  const result: RouteParentReference[] = [];
  for (const ref of info.parentRefs) {
    const kind = parentKind(ref);
    if (!kind) continue;
    const namespace = ref.namespace ?? localNamespace;
    const meshParent = kind === "Service" || kind === "ServiceEntry";
    if (meshParent && waypointOfAnotherController(kind, namespace, ref.name, cluster)) continue;
    const candidates = meshParent ? [MESH_PARENT] : (parents.get(`${kind}/${namespace}/${ref.name}`) ?? []);
    for (const parent of candidates) {
      const banned = new Set<string>();
      for (const other of candidates) {
        if (other === parent || other.port !== parent.port || other.protocol !== parent.protocol) continue;
        banned.add(other.originalHostname);
      }
      banned.delete(parent.originalHostname);
      result.push({
        internalName: parent.internalName,
        internalKind: kind,
        hostname: parent.originalHostname,
        deniedReason: referenceDenied(parent, info, kind, ref, namespace, cluster),
        originalReference: ref,
        bannedHostnames: banned,
        parentKind: kind,
        parentNamespace: namespace,
        parentName: ref.name,
        sectionName: parent.sectionName,
      });
    }
  }
  // Stable order by parentRef (sort is stable, so listeners keep their order within one ref).
  return result.sort((a, b) =>
    compare(parentRefString(a.originalReference, localNamespace), parentRefString(b.originalReference, localNamespace)),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// A Service parent whose waypoint belongs to another controller is not ours to program.
function waypointOfAnotherController(kind: string, namespace: string, name: string, cluster: ClusterObjects): boolean {
  const obj = (kind === "Service" ? cluster.services : cluster.serviceEntries).get(`${namespace}/${name}`);
  if (!obj) return false;
  let labels = obj.metadata.labels ?? {};
  if (!Object.hasOwn(labels, WAYPOINT_LABEL)) labels = cluster.namespaces.get(namespace)?.metadata.labels ?? {};
  const waypoint = labels[WAYPOINT_LABEL];
  if (!waypoint || waypoint.toLowerCase() === "none") return false;
  const waypointNamespace = labels["istio.io/use-waypoint-namespace"] || namespace;
  const gateway = cluster.gateways.get(`${waypointNamespace}/${waypoint}`);
  const className = gateway?.spec?.gatewayClassName;
  const gatewayClass = className === undefined ? undefined : cluster.gatewayClasses.get(className);
  if (!gatewayClass) return false;
  const controller = gatewayClass.spec?.controllerName;
  return controller !== MESH_CONTROLLER && controller !== GATEWAY_CONTROLLER;
}

function referenceDenied(
  parent: ParentInfo,
  info: RouteInfo,
  kind: string,
  ref: ParentRef,
  namespace: string,
  cluster: ClusterObjects,
): ParentError | undefined {
  const localNamespace = info.route.metadata.namespace ?? "";
  if (kind === "Service" || kind === "ServiceEntry") {
    const objects = kind === "Service" ? cluster.services : cluster.serviceEntries;
    if (!objects.has(`${namespace}/${ref.name}`)) {
      const what = kind === "Service" ? "parent service" : "parent service entry";
      return { reason: "NoMatchingParent", message: `${what}: "${ref.name}" not found` };
    }
  } else {
    if (ref.port && ref.port !== parent.port)
      return { reason: "NoMatchingParent", message: `port ${ref.port} not found` };
    if (ref.sectionName && ref.sectionName !== parent.sectionName) {
      return { reason: "NoMatchingParent", message: `sectionName "${ref.sectionName}" not found` };
    }
    const routeHosts = info.hostnames.length > 0 ? info.hostnames : ["*"];
    if (parent.hostnames.length > 0) {
      let matched = false;
      let hostMatched = false;
      search: for (const routeHost of routeHosts) {
        for (const parentHost of parent.hostnames) {
          const slash = parentHost.indexOf("/");
          const parentNamespace = slash === -1 ? "*" : parentHost.slice(0, slash);
          const hostname = slash === -1 ? parentHost : parentHost.slice(slash + 1);
          const hostnameMatch = hostsMatch(hostname, routeHost);
          hostMatched ||= hostnameMatch;
          if (hostnameMatch && (parentNamespace === "*" || parentNamespace === localNamespace)) {
            matched = true;
            break search;
          }
        }
      }
      if (!matched) {
        return hostMatched
          ? {
              reason: "NotAllowedByListeners",
              message: `hostnames matched parent hostname "${parent.originalHostname}", but namespace "${localNamespace}" is not allowed by the parent`,
            }
          : {
              reason: "NoMatchingListenerHostname",
              message: `no hostnames matched parent hostname "${parent.originalHostname}"`,
            };
      }
    }
  }
  const routeKind = info.route.kind;
  if (!parent.allowedKinds.some((k) => k.kind === routeKind && k.group === GATEWAY_GROUP)) {
    return { reason: "NotAllowedByListeners", message: `kind ${GATEWAY_GROUP}/v1/${routeKind} is not allowed` };
  }
  return undefined;
}

/** The references a route actually binds to, ordered by internal name. */
export function boundReferences(refs: readonly RouteParentReference[]): RouteParentReference[] {
  return refs.filter((r) => !r.deniedReason).sort((a, b) => compare(a.internalName, b.internalName));
}

/** Whether a route hostname belongs on this listener rather than a more specific one on the same port. */
export function hostnameAllowedByIsolation(ref: RouteParentReference, routeHost: string): boolean {
  const ours = ref.hostname;
  if (ours.length > 0 && !ours.startsWith("*")) return true;
  if (ours.length > 0 && !hostsMatch(routeHost, ours)) return false;
  for (const other of ref.bannedHostnames) {
    if (ours.length > other.length) continue;
    if (hostSubsetOf(routeHost, other)) return false;
  }
  return true;
}

export interface RouteParentStatus {
  parentRef: ParentRef;
  controllerName: string;
  conditions: Condition[];
}

interface ParentResult {
  ref: ParentRef;
  denied?: ParentError;
  routeError?: ConfigError;
}

const RANK: Record<string, number> = {
  NotAllowedByListeners: 1,
  NoMatchingListenerHostname: 2,
  ParentRefConflict: 3,
  NoMatchingParent: 4,
};

function rank(result: ParentResult): number {
  return result.denied ? (RANK[result.denied.reason] ?? 0) : 0;
}

/** The route's status.parents: one entry per parentRef, the best result of its listeners reported. */
export function routeParentStatuses(
  refs: readonly RouteParentReference[],
  errorFor: (ref: RouteParentReference) => ConfigError | undefined,
  route: ConfigObject,
  liveParents: readonly RouteParentStatus[],
): RouteParentStatus[] {
  const localNamespace = route.metadata.namespace ?? "";
  const key = (ref: ParentRef) => parentRefString(ref, localNamespace);
  const parents = [...liveParents];
  const liveIndex = new Map<string, number>();
  parents.forEach((p, i) => {
    if (p.controllerName !== GATEWAY_CONTROLLER) return;
    const k = key(p.parentRef);
    if (!liveIndex.has(k)) liveIndex.set(k, i);
  });

  const results: ParentResult[] = refs.map((ref) => ({
    ref: ref.originalReference,
    denied: ref.deniedReason,
    routeError: errorFor(ref),
  }));
  const grouped = groupBy(results, (r) => key(r.ref));

  const appended: RouteParentStatus[] = [];
  for (const [k, group] of grouped) {
    let report: ParentResult = { ...group[0] };
    for (const result of group.slice(1)) {
      const r = rank(result);
      const best = rank(report);
      if (r < best) {
        report = { ...result };
      } else if (r === best) {
        if (!report.denied) report.denied = result.denied;
        else if (result.denied)
          report.denied = { ...report.denied, message: `${report.denied.message}; ${result.denied.message}` };
      }
    }
    const count = group.filter((r) => !r.denied).length;
    const conditions: Record<string, ConditionSpec> = {
      Accepted: {
        reason: "Accepted",
        message: count > 1 ? `Route was valid, bound to ${count} parents` : "Route was valid",
      },
      ResolvedRefs: { reason: "ResolvedRefs", message: "All references resolved" },
    };
    if (report.routeError) conditions.ResolvedRefs.error = report.routeError;
    if (report.denied) conditions.Accepted.error = { reason: report.denied.reason, message: report.denied.message };
    const live = liveParents.find((p) => key(p.parentRef) === k && p.controllerName === GATEWAY_CONTROLLER);
    const status: RouteParentStatus = {
      parentRef: report.ref,
      controllerName: GATEWAY_CONTROLLER,
      conditions: setConditions(route.metadata.generation, live?.conditions ?? [], conditions),
    };
    const index = liveIndex.get(k);
    if (index !== undefined) {
      parents[index] = status;
      liveIndex.delete(k);
    } else {
      appended.push(status);
    }
  }
  appended.sort((a, b) => compare(key(b.parentRef), key(a.parentRef)));
  const stale = new Set(liveIndex.values());
  return [...parents.filter((_, i) => !stale.has(i)), ...appended];
}
