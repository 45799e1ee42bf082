// Which listeners a proxyless gRPC client asks for (Istio's grpcgen newListenerNameFilter): a client
// names `host` or `host:port`, short names included (`echo`, `echo.ns`, `echo.ns.svc`), and an
// xDS-enabled server names `xds.istio.io/grpc/lds/inbound/<ip>:<port>`.
import type { ProxyNode } from "../../model/index.ts";

/** The bootstrap's server_listener_resource_name_template without its `%s`. */
export const SERVER_LISTENER_PREFIX = "xds.istio.io/grpc/lds/inbound/";

/** `host:port` or `[v6]:port` as Go's net.SplitHostPort reads it; undefined when it is not one. */
export function splitHostPort(address: string): { host: string; port: string } | undefined {
  if (address.startsWith("[")) {
    const end = address.indexOf("]:");
    if (end === -1) return undefined;
    return { host: address.slice(1, end), port: address.slice(end + 2) };
  }
  const colon = address.indexOf(":");
  if (colon === -1 || address.indexOf(":", colon + 1) !== -1) return undefined;
  return { host: address.slice(0, colon), port: address.slice(colon + 1) };
}

/** `host:port`, brackets around an IPv6 host (Go's net.JoinHostPort). */
export function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The names a client asked for that resolve to one service hostname, and the ports it wants. */
export interface RequestedListener {
  /** The host parts as the client wrote them: each gets its own listener, named after it. */
  requestedHosts: Set<string>;
  /** Ports asked for; undefined when some name had no port (every port of the service). */
  ports?: Set<string>;
}

/** Requested client listeners by hostname (as written and expanded to an FQDN), and server listener names. */
export interface ListenerRequest {
  outbound: Map<string, RequestedListener>;
  inbound: string[];
}

/**
 * A short name's FQDN in the proxy's DNS domain: `echo` → `echo.<ns>.svc.<suffix>`; `echo.<ns>` and
 * `echo.<ns>.svc` likewise when the domain starts with that suffix.
 */
export function expandShortName(name: string, proxy: Pick<ProxyNode, "dnsDomain" | "metadata">): string | undefined {
  if (!name.includes(".")) return `${name}.${proxy.dnsDomain}`;
  const namespace = proxy.metadata.NAMESPACE ?? "";
  for (const suffix of [namespace, `${namespace}.svc`]) {
    if (name.endsWith(`.${suffix}`) && proxy.dnsDomain.startsWith(suffix)) {
      return `${name.slice(0, -(suffix.length + 1))}.${proxy.dnsDomain}`;
    }
  }
  return undefined;
}

export function parseListenerNames(
  names: Iterable<string>,
  proxy: Pick<ProxyNode, "dnsDomain" | "metadata">,
): ListenerRequest {
  const outbound = new Map<string, RequestedListener>();
  const inbound: string[] = [];
  for (const name of names) {
    if (name.startsWith(SERVER_LISTENER_PREFIX)) {
      inbound.push(name);
      continue;
    }
    const hostPort = splitHostPort(name);
    const requested = hostPort?.host ?? name;
    const fqdn = expandShortName(requested, proxy);
    for (const key of fqdn ? [requested, fqdn] : [requested]) {
      const existing = outbound.get(key);
      const entry = existing ?? { requestedHosts: new Set<string>(), ports: hostPort ? new Set<string>() : undefined };
      entry.requestedHosts.add(requested);
      // A name without a port asks for every port, whatever else named the host.
      if (!hostPort) entry.ports = undefined;
      else if (entry.ports) entry.ports.add(hostPort.port);
      outbound.set(key, entry);
    }
  }
  return { outbound, inbound };
}
