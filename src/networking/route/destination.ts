// Route destinations → Envoy clusters (Istio route.go GetDestinationCluster, processDestination,
// processWeightedDestination): one destination is `cluster`, several are `weighted_clusters` (zero
// weights skipped). Per-destination headers go on the route (one destination) or on the cluster
// weight entry (several).
import { create } from "@bufbuild/protobuf";
import { route } from "../../api/index.ts";
import type { Destination, VirtualServiceHttpRoute } from "../../config/index.ts";
import { translateHeaderOperations } from "./headers.ts";
import type { RouteContext, Service } from "./types.ts";

/** The cluster of a destination whose host is empty (an invalid Gateway API backend). */
export const UNKNOWN_SERVICE_CLUSTER = "UnknownService";

/** Istio's BuildSubsetKey for outbound: `outbound|<port>|<subset>|<host>`. */
export function outboundClusterName(port: number, subset: string, hostname: string): string {
  return `outbound|${port}|${subset}|${hostname}`;
}

/** Istio's ParseSubsetKey for an `outbound|…` or `inbound|…` name; undefined for other names. */
export function parseClusterName(name: string): { port: number; subset: string; hostname: string } | undefined {
  const parts = name.split("|");
  if (parts.length !== 4 || (parts[0] !== "outbound" && parts[0] !== "inbound")) return undefined;
  const port = Number(parts[1]);
  if (!Number.isInteger(port)) return undefined;
  return { port, subset: parts[2], hostname: parts[3] };
}

/**
 * The cluster a destination names: its port, else the service's only port, else the listener port;
 * an ExternalName alias points at its target host.
 */
export function destinationCluster(
  destination: Destination,
  service: Service | undefined,
  listenerPort: number,
): string {
  if (!destination.host) return UNKNOWN_SERVICE_CLUSTER;
  const hostname = service && service.externalName !== "" ? service.externalName : destination.host;
  let port = listenerPort;
  if (destination.port?.number !== undefined) port = destination.port.number;
  else if (service && service.ports.length === 1) port = service.ports[0].port;
  return outboundClusterName(port, destination.subset ?? "", hostname);
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
  const addHash = (dst: VirtualServiceHttpRoute): boolean => {
    const hash = ctx.hashPolicy?.(dst.destination);
    if (hash) action.hashPolicy.push(hash);
    return hash !== undefined;
  };
  if (destinations.length === 1) {
    const dst = destinations[0];
    action.clusterSpecifier = {
      case: "cluster",
      value: destinationCluster(dst.destination, ctx.lookupService(dst.destination.host), ctx.listenerPort),
    };
    if (dst.headers) {
      const ops = translateHeaderOperations(dst.headers);
      out.requestHeadersToAdd.push(...ops.requestHeadersToAdd);
      out.requestHeadersToRemove.push(...ops.requestHeadersToRemove);
      out.responseHeadersToAdd.push(...ops.responseHeadersToAdd);
      out.responseHeadersToRemove.push(...ops.responseHeadersToRemove);
      // The route-level authority rewrite wins, so one and several destinations behave alike.
      if (ops.authority !== "" && action.hostRewriteSpecifier.case === undefined) {
        action.hostRewriteSpecifier = { case: "hostRewriteLiteral", value: ops.authority };
      }
    }
    return addHash(dst);
  }
  const clusters: route.WeightedCluster_ClusterWeight[] = [];
  for (const dst of destinations) {
    if (!dst.weight) continue;
    const weight = create(route.WeightedCluster_ClusterWeightSchema, {
      name: destinationCluster(dst.destination, ctx.lookupService(dst.destination.host), ctx.listenerPort),
      weight: dst.weight,
    });
    if (dst.headers) {
      const ops = translateHeaderOperations(dst.headers);
      weight.requestHeadersToAdd = ops.requestHeadersToAdd;
      weight.requestHeadersToRemove = ops.requestHeadersToRemove;
      weight.responseHeadersToAdd = ops.responseHeadersToAdd;
      weight.responseHeadersToRemove = ops.responseHeadersToRemove;
      if (ops.authority !== "") weight.hostRewriteSpecifier = { case: "hostRewriteLiteral", value: ops.authority };
    }
    addHash(dst);
    clusters.push(weight);
  }
  action.clusterSpecifier = { case: "weightedClusters", value: create(route.WeightedClusterSchema, { clusters }) };
  return false;
}
