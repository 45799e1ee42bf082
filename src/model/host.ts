// Hostname matching and resolution as Istio does it (pkg/config/host, pilot/pkg/model/config.go).
// Matching itself (wildcards, Matches, SubsetOf) is src/util/hosts.ts, shared with config validation
// and the Gateway API conversion; the model re-exports it.
import { isIP } from "node:net";
import { hostSubsetOf, isWildcard } from "../util/index.ts";

export { hostSubsetOf, hostsMatch, isWildcard } from "../util/index.ts";

/**
 * Istio's host.Names order (MoreSpecific): non-wildcards before wildcards, longer before shorter,
 * then alphabetically.
 */
export function compareHostSpecificity(a: string, b: string): number {
  const wa = a.startsWith("*");
  const wb = b.startsWith("*");
  if (wa !== wb) return wa ? 1 : -1;
  if (a.length !== b.length) return b.length - a.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The key of `hosts` that matches `needle` most specifically: the exact host, else the longest
 * wildcard covering it (Istio's MostSpecificHostMatch).
 */
export function mostSpecificHostMatch(needle: string, hosts: Iterable<string>): string | undefined {
  let best: string | undefined;
  for (const candidate of hosts) {
    if (candidate === needle) return candidate;
    if (!isWildcard(candidate) || !hostSubsetOf(needle, candidate)) continue;
    if (best === undefined || candidate.length > best.length) best = candidate;
  }
  return best;
}

/**
 * A host as written in a config of `namespace`, made fully qualified: a short name `reviews`
 * becomes `reviews.<namespace>.svc.<domainSuffix>`; `*`, IPs and names with a dot stay.
 */
export function resolveShortName(host: string, namespace: string, domainSuffix: string): string {
  if (host === "" || host === "*" || isIP(host) !== 0 || host.includes(".")) return host;
  return `${host}.${namespace}.svc.${domainSuffix}`;
}

/** The mesh gateway name: VirtualServices bound to it apply to sidecars. */
export const MESH_GATEWAY = "mesh";

/**
 * A gateway reference made `namespace/name`: a short name is in the config's namespace, `./gw` too,
 * and the legacy `gw.ns.svc.cluster.local` form names `ns/gw`.
 */
export function resolveGatewayName(gateway: string, namespace: string): string {
  if (gateway === MESH_GATEWAY) return gateway;
  const slash = gateway.indexOf("/");
  if (slash >= 0) return gateway.startsWith("./") ? `${namespace}/${gateway.slice(2)}` : gateway;
  const dot = gateway.indexOf(".");
  if (dot < 0) return `${namespace}/${gateway}`;
  const rest = gateway.slice(dot + 1);
  const nextDot = rest.indexOf(".");
  return `${nextDot < 0 ? rest : rest.slice(0, nextDot)}/${gateway.slice(0, dot)}`;
}
