// The route of a service port no VirtualService routes (Istio route.go BuildDefaultHTTPOutboundRoute):
// everything to `outbound|<port>||<host>`, no timeout, the default (or mesh) retry policy.
import { create } from "@bufbuild/protobuf";
import { route } from "../../api/index.ts";
import type { VirtualServiceHttpRetries } from "../../config/index.ts";
import { outboundClusterName } from "./destination.ts";
import { translateRouteMatch } from "./match.ts";
import { translateRetries } from "./retry.ts";
import { applyTimeout } from "./timeout.ts";
import type { MeshConfig } from "./types.ts";

/** Istio's DefaultRouteName. */
export const DEFAULT_ROUTE_NAME = "default";

/** The tracing operation of a service port's default route (`<host>:<port>/*`). */
export function defaultRouteOperation(hostname: string, port: number): string {
  return `${hostname}:${port}/*`;
}

export function buildDefaultOutboundRoute(
  hostname: string,
  port: number,
  mesh: MeshConfig,
  hashPolicy?: route.RouteAction_HashPolicy,
): route.Route {
  const action = create(route.RouteActionSchema, {
    clusterSpecifier: { case: "cluster", value: outboundClusterName(port, "", hostname) },
  });
  // The mesh default, when set, replaces Istio's; a consistent hash does not change it here (as Istio).
  const policy = translateRetries(mesh.defaultHttpRetryPolicy as VirtualServiceHttpRetries | undefined, false);
  if (policy) action.retryPolicy = policy;
  applyTimeout(action, undefined, undefined);
  if (hashPolicy) action.hashPolicy = [hashPolicy];
  return create(route.RouteSchema, {
    name: DEFAULT_ROUTE_NAME,
    match: translateRouteMatch(undefined),
    decorator: { operation: defaultRouteOperation(hostname, port) },
    action: { case: "route", value: action },
  });
}
