// A proxy's generated config with its patches, in the contexts Istio patches each part in (its
// listener_builder.go patchListeners, cluster.go and httproute.go): gateways' config in GATEWAY;
// a sidecar's inbound listeners, their inline route configurations and inbound clusters, and all of a
// waypoint's listeners, in SIDECAR_INBOUND, everything else in SIDECAR_OUTBOUND. Added listeners and
// clusters go where Istio puts them.
import { clone } from "@bufbuild/protobuf";
import { type cluster, core, hcm, listener, packAny, type route, unpackAny } from "../../api/index.ts";
import { parseClusterName } from "../cluster/names.ts";
import { HCM_FILTER } from "../listener/hcm.ts";
import { VIRTUAL_INBOUND, VIRTUAL_OUTBOUND } from "../listener/index.ts";
import { applyClusterPatches, insertedClusters } from "./cluster.ts";
import { applyListenerPatches } from "./listener.ts";
import type { PatchContext } from "./patch.ts";
import type { PatchSet } from "./patch-set.ts";
import { applyRouteConfigurationPatches, type GatewayPortMap } from "./route.ts";

const INBOUND_PASSTHROUGH = "InboundPassthroughCluster";

function isInboundCluster(name: string): boolean {
  return parseClusterName(name)?.direction === "inbound" || name.startsWith(INBOUND_PASSTHROUGH);
}

/** Clusters with CLUSTER patches; `inboundHosts` names the services behind an inbound cluster. */
export function patchGeneratedClusters(
  set: PatchSet,
  clusters: readonly cluster.Cluster[],
  router: boolean,
  inboundHosts: (c: cluster.Cluster) => readonly string[] = () => [],
): cluster.Cluster[] {
  if (!set.has("CLUSTER")) return [...clusters];
  const contextOf = (c: cluster.Cluster): PatchContext =>
    router ? "GATEWAY" : isInboundCluster(c.name) ? "SIDECAR_INBOUND" : "SIDECAR_OUTBOUND";
  const patched = clusters.flatMap((c) => applyClusterPatches(contextOf(c), set, c, inboundHosts(c)) ?? []);
  let ordered: cluster.Cluster[];
  if (router) {
    ordered = [...patched, ...insertedClusters("GATEWAY", set)];
  } else {
    // Outbound additions follow the outbound clusters; inbound ones come last.
    const firstInbound = patched.findIndex((c) => isInboundCluster(c.name));
    const at = firstInbound < 0 ? patched.length : firstInbound;
    ordered = [
      ...patched.slice(0, at),
      ...insertedClusters("SIDECAR_OUTBOUND", set),
      ...patched.slice(at),
      ...insertedClusters("SIDECAR_INBOUND", set),
    ];
  }
  const seen = new Set<string>();
  return ordered.filter((c) => !seen.has(c.name) && seen.add(c.name));
}

/** A route configuration requested over RDS, patched in the proxy's outbound or gateway context. */
export function patchGeneratedRouteConfiguration(
  set: PatchSet,
  rc: route.RouteConfiguration,
  router: boolean,
  portMap?: GatewayPortMap,
): route.RouteConfiguration {
  return applyRouteConfigurationPatches(router ? "GATEWAY" : "SIDECAR_OUTBOUND", set, rc, portMap);
}

/** The listener with the inline route configurations of its HTTP connection managers patched. */
function patchInlineRoutes(set: PatchSet, l: listener.Listener, context: PatchContext): listener.Listener {
  if (!set.has("ROUTE_CONFIGURATION", "VIRTUAL_HOST", "HTTP_ROUTE")) return l;
  let copy: listener.Listener | undefined;
  const chains = [...l.filterChains, ...(l.defaultFilterChain ? [l.defaultFilterChain] : [])];
  chains.forEach((fc, chainIndex) => {
    fc.filters.forEach((filter, filterIndex) => {
      if (filter.name !== HCM_FILTER || filter.configType.case !== "typedConfig") return;
      const manager = unpackAny(filter.configType.value, hcm.HttpConnectionManagerSchema);
      if (manager?.routeSpecifier.case !== "routeConfig") return;
      const rc = manager.routeSpecifier.value;
      const patched = applyRouteConfigurationPatches(context, set, rc);
      if (patched === rc) return;
      copy ??= clone(listener.ListenerSchema, l);
      manager.routeSpecifier = { case: "routeConfig", value: patched };
      const chain = chainIndex < copy.filterChains.length ? copy.filterChains[chainIndex] : copy.defaultFilterChain;
      const target = chain?.filters[filterIndex];
      if (target) target.configType = { case: "typedConfig", value: packAny(hcm.HttpConnectionManagerSchema, manager) };
    });
  });
  return copy ?? l;
}

/**
 * Listeners with their patches. Each listener is patched in its context; LISTENER ADD patches add
 * their listeners once per context (ANY: outbound and gateways only), after the generated ones.
 */
export function patchGeneratedListeners(
  set: PatchSet,
  listeners: readonly listener.Listener[],
  router: boolean,
): listener.Listener[] {
  if (set.empty) return [...listeners];
  if (router) return applyListenerPatches("GATEWAY", set, listeners, false);
  const patched = listeners.flatMap((l) => {
    const inbound = l.name === VIRTUAL_INBOUND || l.trafficDirection === core.TrafficDirection.INBOUND;
    const context: PatchContext = inbound && l.name !== VIRTUAL_OUTBOUND ? "SIDECAR_INBOUND" : "SIDECAR_OUTBOUND";
    // Istio builds inbound routes inline and patches them before the listener patches run.
    const withRoutes = context === "SIDECAR_INBOUND" ? patchInlineRoutes(set, l, context) : l;
    return applyListenerPatches(context, set, [withRoutes], true);
  });
  return [
    ...patched,
    ...applyListenerPatches("SIDECAR_OUTBOUND", set, [], false),
    ...applyListenerPatches("SIDECAR_INBOUND", set, [], false),
  ];
}

/**
 * A waypoint's listeners with their patches (Istio's patchListeners for a waypoint): every listener
 * of a waypoint is one of its inbound ones, patched in SIDECAR_INBOUND; LISTENER ADD patches of
 * SIDECAR_OUTBOUND add theirs before them, those of SIDECAR_INBOUND after.
 */
export function patchWaypointListeners(set: PatchSet, listeners: readonly listener.Listener[]): listener.Listener[] {
  if (set.empty) return [...listeners];
  return [
    ...applyListenerPatches("SIDECAR_OUTBOUND", set, [], false),
    ...applyListenerPatches("SIDECAR_INBOUND", set, listeners, false),
  ];
}

/**
 * A waypoint's inline route configuration that routes to its own cluster (no VirtualService for the
 * service, or a workload served directly), patched as Istio patches it while building it; those built
 * from VirtualServices are left as they are, as in Istio.
 */
export function patchWaypointDefaultRoute(set: PatchSet, rc: route.RouteConfiguration): route.RouteConfiguration {
  return applyRouteConfigurationPatches("SIDECAR_INBOUND", set, rc);
}

/** A waypoint's clusters and the clusters CLUSTER ADD patches add in SIDECAR_INBOUND (Istio patches no other). */
export function patchWaypointClusters(set: PatchSet, clusters: readonly cluster.Cluster[]): cluster.Cluster[] {
  if (!set.has("CLUSTER")) return [...clusters];
  const seen = new Set<string>();
  return [...clusters, ...insertedClusters("SIDECAR_INBOUND", set)].filter(
    (c) => !seen.has(c.name) && seen.add(c.name),
  );
}
