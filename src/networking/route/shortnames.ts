// Short names in a VirtualService resolved as Istio does before building routes
// (pilot/pkg/model/virtualservice.go ResolveVirtualServiceShortnames): hosts and destination hosts
// without a dot become `<name>.<namespace>.svc.<domain suffix>`; gateway names become `<ns>/<name>`.
import { isIP } from "node:net";
import type { Destination, VirtualServiceSpec } from "../../config/index.ts";
import { MESH_GATEWAY, type VirtualService } from "./types.ts";

/** Istio's ResolveShortnameToFQDN. `*`, IPs and names with a dot stay as written. */
export function resolveShortname(hostname: string, namespace: string, domainSuffix: string): string {
  if (hostname === "" || hostname === "*" || isIP(hostname) !== 0 || hostname.includes(".")) return hostname;
  let out = hostname;
  if (namespace !== "") out += `.${namespace}`;
  if (domainSuffix !== "") out += `.svc.${domainSuffix}`;
  return out;
}

/** Istio's resolveGatewayName: `name` and `./name` → `<ns>/name`; legacy `name.ns[.svc…]` → `ns/name`. */
export function resolveGatewayName(gateway: string, namespace: string): string {
  if (gateway === MESH_GATEWAY) return gateway;
  const slash = gateway.indexOf("/");
  if (slash !== -1) return gateway.slice(0, slash) === "." ? `${namespace}/${gateway.slice(slash + 1)}` : gateway;
  const dot = gateway.indexOf(".");
  if (dot === -1) return `${namespace}/${gateway}`;
  const rest = gateway.slice(dot + 1);
  const next = rest.indexOf(".");
  return `${next === -1 ? rest : rest.slice(0, next)}/${gateway.slice(0, dot)}`;
}

/** A copy of the VirtualService with its short names resolved (the input is not changed). */
export function resolveShortnames(vs: VirtualService, domainSuffix: string): VirtualService {
  const spec = vs.spec;
  if (!spec) return vs;
  const ns = vs.metadata.namespace ?? "";
  const host = (h: string) => resolveShortname(h, ns, domainSuffix);
  const dest = (d: Destination): Destination => ({ ...d, host: host(d.host) });
  const gateways = (gs: string[] | undefined) => gs?.map((g) => resolveGatewayName(g, ns));
  const out: VirtualServiceSpec = {
    ...spec,
    hosts: spec.hosts?.map(host),
    gateways: gateways(spec.gateways),
    http: spec.http?.map((h) => ({
      ...h,
      match: h.match?.map((m) => ({ ...m, gateways: gateways(m.gateways) })),
      route: h.route?.map((r) => ({ ...r, destination: dest(r.destination) })),
      mirror: h.mirror ? dest(h.mirror) : undefined,
      mirrors: h.mirrors?.map((m) => ({ ...m, destination: dest(m.destination) })),
    })),
    tcp: spec.tcp?.map((t) => ({
      ...t,
      match: t.match?.map((m) => ({ ...m, gateways: gateways(m.gateways) })),
      route: t.route?.map((r) => ({ ...r, destination: dest(r.destination) })),
    })),
    tls: spec.tls?.map((t) => ({
      ...t,
      match: t.match.map((m) => ({ ...m, gateways: gateways(m.gateways) })),
      route: t.route?.map((r) => ({ ...r, destination: dest(r.destination) })),
    })),
  };
  return { ...vs, spec: out };
}
