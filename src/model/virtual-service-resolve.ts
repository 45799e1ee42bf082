// A VirtualService with every name made fully qualified, as Istio's ResolveVirtualServiceShortnames:
// hosts and route destinations (`reviews` in `bookinfo` → `reviews.bookinfo.svc.cluster.local`),
// and gateway references (`gw` → `bookinfo/gw`). The input is left untouched, and fields it does
// not set stay unset; a match whose gateway names are already resolved is kept, not copied.
import type { Destination, VirtualServiceSpec } from "../config/types/index.ts";
import { type Memos, weakTable } from "../util/index.ts";
import { resolveGatewayName, resolveShortName } from "./host.ts";

// Each match naming gateways, with those names resolved, per match object and namespace: the route
// builders keep one RouteMatch per match object, which a new copy on every push would defeat.
const RESOLVED_MATCHES = weakTable<object, Map<string, object>>("model/resolvedMatches");

/** The match with its gateway names resolved: the match itself when none changes. */
function withResolvedGateways<M extends { gateways?: string[] }>(memos: Memos, match: M, namespace: string): M {
  const { gateways } = match;
  if (!gateways || gateways.every((g) => resolveGatewayName(g, namespace) === g)) return match;
  const resolvedMatches = memos.weak(RESOLVED_MATCHES);
  let byNamespace = resolvedMatches.get(match);
  if (!byNamespace) {
    byNamespace = new Map();
    resolvedMatches.set(match, byNamespace);
  }
  let resolved = byNamespace.get(namespace) as M | undefined;
  if (!resolved) {
    resolved = { ...match, gateways: gateways.map((g) => resolveGatewayName(g, namespace)) };
    byNamespace.set(namespace, resolved);
  }
  return resolved;
}

export function resolveVirtualServiceNames(
  spec: VirtualServiceSpec,
  namespace: string,
  domainSuffix: string,
  memos: Memos,
): VirtualServiceSpec {
  const host = (h: string) => resolveShortName(h, namespace, domainSuffix);
  const destination = (d: Destination): Destination => ({ ...d, host: host(d.host) });
  const withDestination = <R extends { destination: Destination }>(r: R): R => ({
    ...r,
    destination: destination(r.destination),
  });
  const withGateways = <M extends { gateways?: string[] }>(m: M): M => withResolvedGateways(memos, m, namespace);
  return {
    ...spec,
    ...(spec.hosts && { hosts: spec.hosts.map(host) }),
    ...(spec.gateways && { gateways: spec.gateways.map((g) => resolveGatewayName(g, namespace)) }),
    ...(spec.http && {
      http: spec.http.map((route) => ({
        ...route,
        ...(route.match && { match: route.match.map(withGateways) }),
        ...(route.route && { route: route.route.map(withDestination) }),
        ...(route.mirror && { mirror: destination(route.mirror) }),
        ...(route.mirrors && { mirrors: route.mirrors.map(withDestination) }),
      })),
    }),
    ...(spec.tcp && {
      tcp: spec.tcp.map((route) => ({
        ...route,
        ...(route.match && { match: route.match.map(withGateways) }),
        ...(route.route && { route: route.route.map(withDestination) }),
      })),
    }),
    ...(spec.tls && {
      tls: spec.tls.map((route) => ({
        ...route,
        match: route.match.map(withGateways),
        ...(route.route && { route: route.route.map(withDestination) }),
      })),
    }),
  };
}
