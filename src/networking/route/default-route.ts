// The route of a service port no VirtualService routes (Istio route.go BuildDefaultHTTPOutboundRoute):
// everything to `outbound|<port>||<host>`, no timeout, the default (or mesh) retry policy.
import { create } from "@bufbuild/protobuf";
import { route } from "../../api/index.ts";
import type { VirtualServiceHttpRetries } from "../../config/index.ts";
import type { Memos } from "../../util/index.ts";
import { outboundClusterName } from "../cluster/names.ts";
import { toDuration, ZERO_DURATION } from "../duration.ts";
import { MATCH_ALL } from "./match.ts";
import { newDecorator, newRoute, newRouteAction } from "./message.ts";
import { parseRetryOn, translateRetries } from "./retry.ts";
import { applyTimeout } from "./timeout.ts";
import type { MeshConfig } from "./types.ts";

/** Istio's DefaultRouteName. */
export const DEFAULT_ROUTE_NAME = "default";

/** The tracing operation of a service port's default route (`<host>:<port>/*`). */
export function defaultRouteOperation(hostname: string, port: number): string {
  return `${hostname}:${port}/*`;
}

export function buildDefaultOutboundRoute(
  memos: Memos,
  hostname: string,
  port: number,
  mesh: MeshConfig,
  hashPolicy?: route.RouteAction_HashPolicy,
): route.Route {
  const cluster = outboundClusterName(memos, port, "", hostname);
  return buildDefaultRouteTo(memos, cluster, defaultRouteOperation(hostname, port), mesh, hashPolicy);
}

/**
 * Everything to `cluster` as an outbound route does: a waypoint's route of a service no VirtualService
 * routes (its `inbound-vip|…` cluster) is one.
 */
export function buildDefaultRouteTo(
  memos: Memos,
  cluster: string,
  operation: string,
  mesh: MeshConfig,
  hashPolicy?: route.RouteAction_HashPolicy,
): route.Route {
  const action = newRouteAction();
  action.clusterSpecifier = { case: "cluster", value: cluster };
  // The mesh default, when set, replaces Istio's; a consistent hash does not change it here (as Istio).
  const retries = mesh.defaultHttpRetryPolicy as VirtualServiceHttpRetries | undefined;
  const policy = translateRetries(memos, retries, false);
  if (policy) action.retryPolicy = policy;
  applyTimeout(action, undefined, undefined);
  if (hashPolicy) action.hashPolicy.push(hashPolicy);
  const out = newRoute();
  out.name = DEFAULT_ROUTE_NAME;
  out.match = MATCH_ALL;
  out.decorator = newDecorator(operation);
  out.action = { case: "route", value: action };
  return out;
}

/** Retries of inbound routes (Istio retry.ConvertInboundPolicy): 2 on reset-before-request, or the mesh defaultInboundHttpRetryPolicy. */
export function inboundRetryPolicy(mesh: MeshConfig): route.RetryPolicy | undefined {
  const configured = mesh.defaultInboundHttpRetryPolicy as VirtualServiceHttpRetries | undefined;
  if (!configured) return create(route.RetryPolicySchema, { numRetries: 2, retryOn: "reset-before-request" });
  if ((configured.attempts ?? 0) <= 0) return undefined;
  const out = create(route.RetryPolicySchema, { numRetries: configured.attempts, retryOn: "reset-before-request" });
  if (configured.retryOn) {
    const parsed = parseRetryOn(configured.retryOn);
    out.retryOn = parsed.retryOn;
    out.retriableStatusCodes = parsed.codes;
    if (parsed.codes.length > 0 && !out.retryOn.includes("retriable-status-codes"))
      out.retryOn += ",retriable-status-codes";
  }
  const backoff = toDuration(configured.backoff);
  if (backoff) out.retryBackOff = create(route.RetryPolicy_RetryBackOffSchema, { baseInterval: backoff });
  return out;
}

/**
 * The route of a sidecar inbound chain (Istio route.go BuildDefaultHTTPInboundRoute): everything to
 * `clusterName` with no timeout and no stream limit; retries except on gRPC ports, where the
 * reset-before-request retry does not suit streams.
 */
export function buildDefaultInboundRoute(
  clusterName: string,
  operation: string,
  grpc: boolean,
  mesh: MeshConfig,
): route.Route {
  const action = create(route.RouteActionSchema, {
    clusterSpecifier: { case: "cluster", value: clusterName },
    timeout: ZERO_DURATION,
    maxStreamDuration: { maxStreamDuration: ZERO_DURATION, grpcTimeoutHeaderMax: ZERO_DURATION },
  });
  const policy = grpc ? undefined : inboundRetryPolicy(mesh);
  if (policy) action.retryPolicy = policy;
  return create(route.RouteSchema, {
    name: DEFAULT_ROUTE_NAME,
    match: MATCH_ALL,
    decorator: { operation },
    action: { case: "route", value: action },
  });
}
