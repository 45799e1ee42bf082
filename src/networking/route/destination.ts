// Route destinations → Envoy clusters (Istio route.go GetDestinationCluster, processDestination,
// processWeightedDestination): one destination is `cluster`, several are `weighted_clusters` (zero
// weights skipped). Per-destination headers go on the route (one destination) or on the cluster
// weight entry (several).
import type { route } from "../../api/index.ts";
import type { Destination, VirtualServiceHttpRoute } from "../../config/index.ts";
import type { Memos } from "../../util/index.ts";
import { outboundClusterName } from "../cluster/names.ts";
import { type HeaderOperations, translateHeaderOperations } from "./headers.ts";
import { newClusterWeight, newWeightedCluster } from "./message.ts";
import type { RouteContext, Service } from "./types.ts";

/** The cluster of a destination whose host is empty (an invalid Gateway API backend). */
export const UNKNOWN_SERVICE_CLUSTER = "UnknownService";

/** The port of a destination's cluster when it has one of its own: its port, else its service's only port. */
function ownPort(destination: Destination, service: Service | undefined): number | undefined {
  if (destination.port?.number !== undefined) return destination.port.number;
  if (service && service.ports.length === 1) return service.ports[0].port;
  return undefined;
}

/**
 * The cluster a destination names: its port, else the service's only port, else the listener port;
 * an ExternalName alias points at its target host.
 */
export function destinationCluster(
  memos: Memos,
  destination: Destination,
  service: Service | undefined,
  listenerPort: number,
): string {
  if (!destination.host) return UNKNOWN_SERVICE_CLUSTER;
  const hostname = service && service.externalName !== "" ? service.externalName : destination.host;
  return outboundClusterName(memos, ownPort(destination, service) ?? listenerPort, destination.subset ?? "", hostname);
}

/**
 * destinationCluster of a route's destination, which reads `ctx.listenerPort` only when the destination
 * and its service give no port (a gateway shares routes that never read it between its servers).
 */
export function routeDestinationCluster(destination: Destination, ctx: RouteContext): string {
  if (!destination.host) return UNKNOWN_SERVICE_CLUSTER;
  const service = ctx.lookupService(destination.host);
  if (ctx.destinationCluster) return ctx.destinationCluster(destination, service, ctx.listenerPort);
  return destinationCluster(ctx.memos, destination, service, ownPort(destination, service) ?? ctx.listenerPort);
}

/** The header operations of a single destination, added to the route's; undefined when it has none. */
export function addDestinationHeaders(
  memos: Memos,
  out: route.Route,
  destinations: readonly VirtualServiceHttpRoute[],
): HeaderOperations | undefined {
  const headers = destinations.length === 1 ? destinations[0].headers : undefined;
  if (!headers) return undefined;
  const ops = translateHeaderOperations(memos, headers);
  out.requestHeadersToAdd.push(...ops.requestHeadersToAdd);
  out.requestHeadersToRemove.push(...ops.requestHeadersToRemove);
  out.responseHeadersToAdd.push(...ops.responseHeadersToAdd);
  out.responseHeadersToRemove.push(...ops.responseHeadersToRemove);
  return ops;
}

/**
 * Sets the cluster (or weighted clusters) and hash policies of `action` from the HTTP route
 * destinations; headers of a single destination go on `out`. Returns whether a single destination
 * has a consistent hash (its retries then keep no previous-hosts predicate).
 */
export function applyDestinations(
  out: route.Route,
  action: route.RouteAction,
  destinations: readonly VirtualServiceHttpRoute[],
  ctx: RouteContext,
): boolean {
  if (destinations.length === 1) {
    const dst = destinations[0];
    action.clusterSpecifier = {
      case: "cluster",
      value: routeDestinationCluster(dst.destination, ctx),
    };
    const ops = addDestinationHeaders(ctx.memos, out, destinations);
    // The route-level authority rewrite wins, so one and several destinations behave alike.
    if (ops && ops.authority !== "" && action.hostRewriteSpecifier.case === undefined) {
      action.hostRewriteSpecifier = { case: "hostRewriteLiteral", value: ops.authority };
    }
    return addHashPolicy(action, dst, ctx);
  }
  const clusters: route.WeightedCluster_ClusterWeight[] = [];
  for (const dst of destinations) {
    if (!dst.weight) continue;
    const weight = newClusterWeight();
    weight.name = routeDestinationCluster(dst.destination, ctx);
    weight.weight = dst.weight;
    if (dst.headers) {
      const ops = translateHeaderOperations(ctx.memos, dst.headers);
      weight.requestHeadersToAdd = [...ops.requestHeadersToAdd];
      weight.requestHeadersToRemove = [...ops.requestHeadersToRemove];
      weight.responseHeadersToAdd = [...ops.responseHeadersToAdd];
      weight.responseHeadersToRemove = [...ops.responseHeadersToRemove];
      if (ops.authority !== "") weight.hostRewriteSpecifier = { case: "hostRewriteLiteral", value: ops.authority };
    }
    addHashPolicy(action, dst, ctx);
    clusters.push(weight);
  }
  action.clusterSpecifier = { case: "weightedClusters", value: newWeightedCluster(clusters) };
  return false;
}

/** Adds the destination's consistent-hash policy, if any, to `action`; returns whether it has one. */
function addHashPolicy(action: route.RouteAction, dst: VirtualServiceHttpRoute, ctx: RouteContext): boolean {
  const hash = ctx.hashPolicy?.(dst.destination);
  if (hash) action.hashPolicy.push(hash);
  return hash !== undefined;
}
