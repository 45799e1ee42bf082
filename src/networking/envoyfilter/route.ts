// ROUTE_CONFIGURATION, VIRTUAL_HOST and HTTP_ROUTE patches (Istio's envoyfilter/rc_patch.go): MERGE
// on the route configuration, then per virtual host REMOVE/MERGE/REPLACE and its routes (REMOVE and
// MERGE per route, then ADD and the relative inserts), then VIRTUAL_HOST ADD appends hosts.
import { clone } from "@bufbuild/protobuf";
import { route } from "../../api/index.ts";
import { parseClusterName } from "../cluster/names.ts";
import { type Marks, patchResource } from "./guard.ts";
import { applyListOperation } from "./list-ops.ts";
import { isMergeOperation, listMerge, mergeMessage } from "./merge.ts";
import type { ApplyTo, Patch, PatchContext } from "./patch.ts";
import { contextMatches, type PatchSet } from "./patch-set.ts";

const ROUTE_KINDS: readonly ApplyTo[] = ["ROUTE_CONFIGURATION", "VIRTUAL_HOST", "HTTP_ROUTE"];

/** A gateway's service ports by the target port its routes are named after (Istio's GatewayPortMap). */
export type GatewayPortMap = ReadonlyMap<number, ReadonlySet<number>>;

/** Istio's ParseGatewayRDSRouteName: `http.<port>` or `https.<port>.<portName>.<gateway>.<namespace>`. */
function parseGatewayRouteName(name: string): { port: number; portName: string; gateway: string } {
  const parts = name.split(".");
  const port = (text: string | undefined) => (/^\d+$/.test(text ?? "") ? Number(text) : 0);
  if (name.startsWith("http.") && parts.length >= 2) return { port: port(parts[1]), portName: "", gateway: "" };
  if (name.startsWith("https.") && parts.length >= 5) {
    return { port: port(parts[1]), portName: parts[2], gateway: `${parts[4]}/${parts[3]}` };
  }
  return { port: 0, portName: "", gateway: "" };
}

function routeConfigurationMatch(
  context: PatchContext,
  rc: route.RouteConfiguration,
  patch: Patch,
  portMap: GatewayPortMap,
): boolean {
  const match = patch.match.routeConfiguration;
  if (!match) return true;
  if (match.name && match.name !== rc.name) return false;
  if (context !== "GATEWAY") {
    // Sidecar routes are named by port (`9080`) or after an inbound cluster (`inbound|9080||`).
    const port = rc.name.startsWith("inbound")
      ? (parseClusterName(rc.name)?.port ?? 0)
      : /^\d+$/.test(rc.name)
        ? Number(rc.name)
        : 0;
    return !match.portNumber || match.portNumber === port;
  }
  const parsed = parseGatewayRouteName(rc.name);
  if (match.portNumber) {
    const servicePorts = portMap.get(parsed.port);
    if (servicePorts ? !servicePorts.has(match.portNumber) : parsed.port !== match.portNumber) return false;
  }
  if (match.portName && match.portName !== parsed.portName) return false;
  if (match.gateway && match.gateway !== parsed.gateway) return false;
  return true;
}

function virtualHostMatch(vh: route.VirtualHost, patch: Patch): boolean {
  const match = patch.match.routeConfiguration?.vhost;
  if (!match) return true;
  if (match.name && match.name !== vh.name) return false;
  return !match.domainName || vh.domains.includes(match.domainName);
}

const ACTION_CASE = { ROUTE: "route", REDIRECT: "redirect", DIRECT_RESPONSE: "directResponse" } as const;

const hasRouteMatch = (patch: Patch) => patch.match.routeConfiguration?.vhost?.route !== undefined;

function routeMatch(r: route.Route, patch: Patch): boolean {
  const match = patch.match.routeConfiguration?.vhost?.route;
  if (!match) return true;
  if (match.name && match.name !== r.name) return false;
  const action = match.action ?? "ANY";
  return action === "ANY" || r.action.case === ACTION_CASE[action];
}

function patchRouteConfiguration(
  context: PatchContext,
  set: PatchSet,
  rc: route.RouteConfiguration,
  portMap: GatewayPortMap,
  marks: Marks,
): route.RouteConfiguration {
  const inScope = (p: Patch) => contextMatches(p, context) && routeConfigurationMatch(context, rc, p, portMap);
  for (const patch of set.of("ROUTE_CONFIGURATION")) {
    const applies = isMergeOperation(patch.operation) && inScope(patch);
    if (applies)
      mergeMessage(
        route.RouteConfigurationSchema,
        rc,
        patch.value as route.RouteConfiguration,
        listMerge(patch.operation),
      );
    marks.mark(patch, applies);
  }
  const hosts: route.VirtualHost[] = [];
  for (const vh of rc.virtualHosts) {
    const patched = patchVirtualHost(set, vh, inScope, marks);
    if (patched) hosts.push(patched);
  }
  for (const patch of set.of("VIRTUAL_HOST")) {
    if (patch.operation !== "ADD") continue;
    const applies = inScope(patch);
    if (applies) hosts.push(clone(route.VirtualHostSchema, patch.value as route.VirtualHost));
    marks.mark(patch, applies);
  }
  rc.virtualHosts = hosts;
  return rc;
}

/** The virtual host after its patches; undefined when removed. */
function patchVirtualHost(
  set: PatchSet,
  host: route.VirtualHost,
  inScope: (p: Patch) => boolean,
  marks: Marks,
): route.VirtualHost | undefined {
  let vh = host;
  for (const patch of set.of("VIRTUAL_HOST")) {
    if (patch.operation === "ADD") continue;
    const applies = inScope(patch) && virtualHostMatch(vh, patch);
    marks.mark(patch, applies);
    if (!applies) continue;
    if (patch.operation === "REMOVE") return undefined;
    if (patch.operation === "REPLACE") vh = clone(route.VirtualHostSchema, patch.value as route.VirtualHost);
    else if (isMergeOperation(patch.operation)) {
      mergeMessage(route.VirtualHostSchema, vh, patch.value as route.VirtualHost, listMerge(patch.operation));
    }
  }
  patchRoutes(set, vh, (p) => inScope(p) && virtualHostMatch(vh, p), marks);
  return vh;
}

function patchRoutes(set: PatchSet, vh: route.VirtualHost, inScope: (p: Patch) => boolean, marks: Marks): void {
  const patches = set.of("HTTP_ROUTE").filter(inScope);
  // REMOVE and MERGE per route: the first REMOVE matching a route drops it.
  vh.routes = vh.routes.filter((r) => {
    for (const patch of patches) {
      if (!routeMatch(r, patch)) continue;
      if (patch.operation === "REMOVE") {
        marks.mark(patch, true);
        return false;
      }
      if (isMergeOperation(patch.operation)) {
        mergeMessage(route.RouteSchema, r, patch.value as route.Route, listMerge(patch.operation));
        marks.mark(patch, true);
      }
    }
    return true;
  });
  for (const patch of patches) {
    const value = () => clone(route.RouteSchema, patch.value as route.Route);
    switch (patch.operation) {
      case "ADD":
      case "INSERT_AFTER":
      case "INSERT_BEFORE": {
        const { list, applied } = applyListOperation(
          vh.routes,
          patch.operation,
          hasRouteMatch(patch),
          (r) => routeMatch(r, patch),
          value,
        );
        vh.routes = list;
        marks.mark(patch, applied);
        break;
      }
      case "INSERT_FIRST": {
        // With a route match, only virtual hosts holding such a route get it, still at the top.
        const applies = !hasRouteMatch(patch) || vh.routes.some((r) => routeMatch(r, patch));
        if (applies) vh.routes = [value(), ...vh.routes];
        marks.mark(patch, applies);
        break;
      }
      default:
        break;
    }
  }
}

function portMapKey(portMap: GatewayPortMap): string {
  return [...portMap].map(([port, servicePorts]) => `${port}:${[...servicePorts].join("+")}`).join(",");
}

/**
 * Istio's ApplyRouteConfigurationPatches for a route configuration generated in `context`; routers
 * pass their merged gateway's port map.
 */
export function applyRouteConfigurationPatches(
  context: PatchContext,
  set: PatchSet,
  rc: route.RouteConfiguration,
  portMap: GatewayPortMap = new Map(),
): route.RouteConfiguration {
  return (
    patchResource(
      route.RouteConfigurationSchema,
      rc,
      set,
      ROUTE_KINDS,
      `${context}|${portMapKey(portMap)}`,
      (subset, target, marks) => patchRouteConfiguration(context, subset, target, portMap, marks),
    ) ?? rc
  );
}
