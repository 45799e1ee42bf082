// The route hash policy of a destination whose DestinationRule balances by consistent hash (Istio's
// hashForHTTPDestination and consistentHashToHashPolicy, pilot/pkg/networking/core/route/route.go):
// the cluster gets RING_HASH/MAGLEV, the route says what to hash on.
import { create } from "@bufbuild/protobuf";
import { route } from "../api/index.ts";
import type {
  Destination,
  DestinationRuleTrafficPolicy,
  DestinationRuleTrafficPolicyLoadBalancerConsistentHash,
} from "../config/index.ts";
import type { DestinationRuleSpec } from "../config/types/index.ts";
import type { ProxyNode, SidecarScope } from "../model/index.ts";
import { toDuration } from "../networking/index.ts";

type ConsistentHash = DestinationRuleTrafficPolicyLoadBalancerConsistentHash;

/** The consistent hash of the port-level settings for the destination's port, if it names one. */
function portLevelHash(policy: DestinationRuleTrafficPolicy | undefined, port: number | undefined) {
  if (port === undefined) return undefined;
  return policy?.portLevelSettings?.find((p) => p.port?.number === port)?.loadBalancer?.consistentHash;
}

/** The subset's port-level hash, else the subset's, else the rule's port-level, else the rule's own. */
function consistentHashFor(
  scope: SidecarScope,
  proxy: ProxyNode,
  destination: Destination,
): ConsistentHash | undefined {
  const spec = scope.destinationRule("outbound", proxy.labels, destination.host)?.rule.spec;
  if (!spec) return undefined;
  const port = destination.port?.number;
  const subset = spec.subsets?.find((s) => s.name === destination.subset)?.trafficPolicy;
  return (
    portLevelHash(subset, port) ??
    subset?.loadBalancer?.consistentHash ??
    portLevelHash(spec.trafficPolicy, port) ??
    spec.trafficPolicy?.loadBalancer?.consistentHash
  );
}

function toHashPolicy(hash: ConsistentHash): route.RouteAction_HashPolicy | undefined {
  if (hash.httpHeaderName) {
    return create(route.RouteAction_HashPolicySchema, {
      policySpecifier: { case: "header", value: { headerName: hash.httpHeaderName } },
    });
  }
  if (hash.httpCookie) {
    const { name, path, ttl, attributes } = hash.httpCookie;
    return create(route.RouteAction_HashPolicySchema, {
      policySpecifier: {
        case: "cookie",
        value: { name, path: path ?? "", ttl: toDuration(ttl), attributes: attributes ?? [] },
      },
    });
  }
  if (hash.useSourceIp) {
    return create(route.RouteAction_HashPolicySchema, {
      policySpecifier: { case: "connectionProperties", value: { sourceIp: true } },
    });
  }
  if (hash.httpQueryParameterName) {
    return create(route.RouteAction_HashPolicySchema, {
      policySpecifier: { case: "queryParameter", value: { name: hash.httpQueryParameterName } },
    });
  }
  return undefined;
}

/** The route builders' `hashPolicy` for the proxy's scope. */
export function hashPolicyFor(
  scope: SidecarScope,
  proxy: ProxyNode,
): (destination: Destination) => route.RouteAction_HashPolicy | undefined {
  return (destination) => {
    const hash = consistentHashFor(scope, proxy, destination);
    return hash && toHashPolicy(hash);
  };
}

/**
 * The hash policy of a DestinationRule's top-level consistentHash: what a waypoint's default route
 * hashes on (its cluster balances by it).
 */
export function topLevelHashPolicy(spec: DestinationRuleSpec | undefined): route.RouteAction_HashPolicy | undefined {
  const hash = spec?.trafficPolicy?.loadBalancer?.consistentHash;
  return hash && toHashPolicy(hash);
}
