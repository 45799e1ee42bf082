// A VirtualService with every name made fully qualified, as Istio's ResolveVirtualServiceShortnames:
// hosts and route destinations (`reviews` in `bookinfo` → `reviews.bookinfo.svc.cluster.local`),
// and gateway references (`gw` → `bookinfo/gw`). The input is left untouched, and fields it does
// not set stay unset.
import type { Destination, VirtualServiceSpec } from "../config/types/index.ts";
import { resolveGatewayName, resolveShortName } from "./host.ts";

export function resolveVirtualServiceNames(
  spec: VirtualServiceSpec,
  namespace: string,
  domainSuffix: string,
): VirtualServiceSpec {
  const host = (h: string) => resolveShortName(h, namespace, domainSuffix);
  const destination = (d: Destination): Destination => ({ ...d, host: host(d.host) });
  const withDestination = <R extends { destination: Destination }>(r: R): R => ({
    ...r,
    destination: destination(r.destination),
  });
  const withGateways = <M extends { gateways?: string[] }>(m: M): M =>
    m.gateways ? { ...m, gateways: m.gateways.map((g) => resolveGatewayName(g, namespace)) } : m;
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
