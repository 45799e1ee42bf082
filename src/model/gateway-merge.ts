// The Istio Gateways selecting one router proxy, merged into the servers it listens with, as
// Istio's mergeGateways: per port, plaintext HTTP servers merge into one route `http.<port>`;
// TLS servers share a port when their SNI hosts differ (a duplicate host drops the server); HTTPS
// servers terminating TLS each get route `https.<port>.<portName>.<gateway>.<namespace>`; a
// server whose protocol cannot share the port with the existing plaintext one is dropped.
import { parseProtocol } from "../config/index.ts";
import type { Gateway, GatewayServers } from "../config/types/index.ts";
import { nameOf, namespaceOf } from "./config-meta.ts";
import { verifiedCredentials } from "./gateway-credentials.ts";
import type { SelectedGateway, ServiceTarget } from "./gateway-select.ts";
import { appendTo } from "./multimap.ts";

export interface ServerPort {
  /** The port listened on (a service targetPort, or the server port). */
  number: number;
  protocol: string;
  bind: string;
}

export interface MergedServer {
  /** The server, hosts sanitized (`./h` → `<ns>/h`, `*\/h` → `h`, `*\/*` → `*`). */
  server: GatewayServers;
  /** The owning Gateway, `namespace/name`. */
  gatewayName: string;
  gateway: Gateway;
  /** For servers with TLS settings: their route name and SNI hosts. */
  tls?: { routeName: string; sniHosts: string[] };
}

export interface MergedPort {
  port: ServerPort;
  servers: MergedServer[];
  /** The RDS route name of plaintext HTTP servers on this port ("" otherwise). */
  routeName: string;
}

export interface MergedGateway {
  /** One entry per port and bind listened on, in the order first seen. */
  ports: readonly MergedPort[];
  /** The HTTP servers behind each RDS route name. */
  serversByRouteName: ReadonlyMap<string, readonly MergedServer[]>;
  /** Every merged Gateway, `namespace/name`. */
  gatewayNames: readonly string[];
  /** Hosts of AUTO_PASSTHROUGH servers (they need the sni-dnat clusters). */
  autoPassthroughSniHosts: ReadonlySet<string>;
  /** Listened port → the server ports that map to it, from the route names. */
  portMap: ReadonlyMap<number, ReadonlySet<number>>;
  /** Gateways whose servers were dropped (conflicts, duplicates), `namespace/name`. */
  rejected: readonly string[];
  /** SDS resources (`kubernetes://ns/name`, `...-cacert`) the proxy's verified identity may fetch. */
  verifiedCredentials: ReadonlySet<string>;
  /**
   * PILOT_ENABLE_QUIC_LISTENERS: the TLS-terminated HTTPS servers also served over QUIC (HTTP/3), per
   * port and bind listened on (Istio's MergedQUICTransportServers).
   */
  quicPorts: readonly MergedPort[];
  /** The route names of the servers served over QUIC: their routes advertise HTTP/3 (`alt-svc`). */
  http3Routes: ReadonlySet<string>;
}

/**
 * Merges the selected Gateways; `identities` are the proxy's verified SPIFFE identities; `quicListeners`
 * is PILOT_ENABLE_QUIC_LISTENERS.
 */
export function mergeGateways(
  selected: readonly SelectedGateway[],
  identities: readonly string[] = [],
  quicListeners = false,
): MergedGateway {
  const listened = new Set<number>();
  const plaintextByPort = new Map<number, ServerPort>();
  const nonPlaintextBinds = new Map<number, Set<string>>();
  const merged = new Map<string, MergedPort>();
  const ports: MergedPort[] = [];
  const serversByRouteName = new Map<string, MergedServer[]>();
  const tlsHostsByPort = new Map<number, Map<string, string>>();
  const gatewayNames = new Set<string>();
  const rejected = new Set<string>();
  const quicPorts = new Map<string, MergedPort>();
  const http3Routes = new Set<string>();

  const addPort = (port: ServerPort, server: MergedServer, routeName: string) => {
    const entry: MergedPort = { port, servers: [server], routeName };
    merged.set(portKey(port), entry);
    ports.push(entry);
  };
  const addRoute = (routeName: string, server: MergedServer) => appendTo(serversByRouteName, routeName, server);
  /**
   * A TLS-terminated HTTPS server also listens for HTTP/3 when the flag is on and the gateway's service
   * exposes the server port over UDP (Istio's IsEligibleForHTTP3Upgrade and udpSupportedPort).
   */
  const addQuic = (port: ServerPort, server: MergedServer, routeName: string, targets: readonly ServiceTarget[]) => {
    if (!quicListeners || !isHttp3Eligible(server.server)) return;
    if (!targets.some((t) => t.port.port === server.server.port.number && t.port.protocol === "UDP")) return;
    const existing = quicPorts.get(portKey(port));
    if (existing) existing.servers.push(server);
    else quicPorts.set(portKey(port), { port, servers: [server], routeName: "" });
    http3Routes.add(routeName);
  };
  const addPlaintextOrNew = (port: ServerPort, server: MergedServer, routeName: string) => {
    if (!isTlsServer(server.server)) plaintextByPort.set(port.number, port);
    if (isHttpServer(server.server)) serversByRouteName.set(routeName, [server]);
    addPort(port, server, routeName);
  };

  for (const { gateway, legacySelector, targets } of selected) {
    const gatewayName = `${namespaceOf(gateway)}/${nameOf(gateway)}`;
    for (const written of gateway.spec?.servers ?? []) {
      if (!written.port) {
        rejected.add(gatewayName);
        continue;
      }
      const server = sanitizeHosts(written, namespaceOf(gateway));
      gatewayNames.add(gatewayName);
      for (const number of resolvePorts(server.port.number, targets, legacySelector)) {
        const routeName = gatewayRouteName(server, number, gateway);
        const entry: MergedServer = { server, gatewayName, gateway };
        if (server.tls) {
          const known = tlsHostsByPort.get(number) ?? new Map<string, string>();
          tlsHostsByPort.set(number, known);
          const bind = server.bind ?? "";
          if (server.hosts.some((h) => known.get(h) === bind)) {
            rejected.add(gatewayName);
            continue;
          }
          for (const h of server.hosts) known.set(h, bind);
          entry.tls = { routeName, sniHosts: sniHosts(server) };
        }
        const port: ServerPort = { number, protocol: server.port.protocol, bind: server.bind ?? "" };
        if (!listened.has(number)) {
          listened.add(number);
          addPlaintextOrNew(port, entry, routeName);
          addQuic(port, entry, routeName, targets);
          continue;
        }
        const current = plaintextByPort.get(number);
        if (current) {
          const sameBind = current.bind === port.bind;
          if ((sameBind && !canMergeProtocols(current.protocol, port.protocol)) || (routeName === "" && sameBind)) {
            rejected.add(gatewayName);
            continue;
          }
          if (sameBind) {
            merged.get(portKey(current))?.servers.push(entry);
            addRoute(routeName, entry);
          } else {
            const existing = merged.get(portKey(port));
            if (!existing) addPlaintextOrNew(port, entry, routeName);
            else {
              existing.routeName = routeName;
              existing.servers.push(entry);
              addRoute(routeName, entry);
            }
            addQuic(port, entry, routeName, targets);
          }
          continue;
        }
        if (!isTlsServer(server)) {
          addPlaintextOrNew(port, entry, routeName);
          continue;
        }
        if (isHttpServer(server)) {
          if (routeName === "" || serversByRouteName.has(routeName)) {
            rejected.add(gatewayName);
            continue;
          }
          serversByRouteName.set(routeName, [entry]);
        }
        const binds = nonPlaintextBinds.get(number) ?? new Set<string>();
        const newBind = !binds.has(port.bind);
        binds.add(port.bind);
        nonPlaintextBinds.set(number, binds);
        if (!server.tls && !newBind) {
          rejected.add(gatewayName);
          continue;
        }
        const existing = merged.get(portKey(port));
        if (existing) existing.servers.push(entry);
        else addPort(port, entry, "");
        addQuic(port, entry, routeName, targets);
      }
    }
  }

  const autoPassthroughSniHosts = new Set<string>();
  for (const { servers } of ports) {
    for (const { server } of servers) {
      if (serverTlsMode(server) === "AUTO_PASSTHROUGH") for (const h of server.hosts) autoPassthroughSniHosts.add(h);
    }
  }
  return {
    ports,
    serversByRouteName,
    gatewayNames: [...gatewayNames],
    autoPassthroughSniHosts,
    portMap: targetPortMap(serversByRouteName),
    rejected: [...rejected],
    verifiedCredentials: verifiedCredentials(
      selected.map((s) => s.gateway),
      identities,
    ),
    quicPorts: [...quicPorts.values()],
    http3Routes,
  };
}

function portKey(port: ServerPort): string {
  return `${port.number}/${port.protocol}/${port.bind}`;
}

/** A protocol name as Istio parses it (case-insensitive); unknown names stay as written. */
function protocolOf(name: string): string {
  return parseProtocol(name) ?? name;
}

function isHttpProtocol(name: string): boolean {
  return ["HTTP", "HTTP2", "HTTP_PROXY", "GRPC", "GRPC-Web"].includes(protocolOf(name));
}

/** A server's TLS mode as Istio reads it: settings without a mode are PASSTHROUGH (the enum's zero value). */
export function serverTlsMode(server: GatewayServers): NonNullable<GatewayServers["tls"]>["mode"] | undefined {
  return server.tls ? (server.tls.mode ?? "PASSTHROUGH") : undefined;
}

/** PASSTHROUGH and AUTO_PASSTHROUGH servers route by SNI without terminating TLS. */
export function isPassthroughServer(server: GatewayServers): boolean {
  const mode = serverTlsMode(server);
  return mode === "PASSTHROUGH" || mode === "AUTO_PASSTHROUGH";
}

/** Non-HTTP with TLS settings (terminated or passed through). */
export function isTlsServer(server: GatewayServers): boolean {
  return server.tls !== undefined && !isHttpProtocol(server.port.protocol);
}

/** HTTP, or HTTPS terminated here. */
export function isHttpServer(server: GatewayServers): boolean {
  if (isHttpProtocol(server.port.protocol)) return true;
  return protocolOf(server.port.protocol) === "HTTPS" && !isPassthroughServer(server);
}

/** HTTPS terminated here: QUIC always carries TLS. */
function isHttp3Eligible(server: GatewayServers): boolean {
  return protocolOf(server.port.protocol) === "HTTPS" && !isPassthroughServer(server);
}

function canMergeProtocols(current: string, next: string): boolean {
  return (isHttpProtocol(current) || protocolOf(current) === protocolOf(next)) && isHttpProtocol(next);
}

/** `http.<port>[.<bind>]` for HTTP, `https.<port>.<portName>.<gw>.<ns>[.<bind>]` for terminated HTTPS, else "". */
export function gatewayRouteName(server: GatewayServers, portNumber: number, gateway: Gateway): string {
  const bind = server.bind ? `.${server.bind}` : "";
  if (isHttpProtocol(server.port.protocol)) return `http.${portNumber}${bind}`;
  if (protocolOf(server.port.protocol) === "HTTPS" && !isPassthroughServer(server)) {
    return `https.${server.port.number}.${server.port.name}.${nameOf(gateway)}.${namespaceOf(gateway)}${bind}`;
  }
  return "";
}

/**
 * The ports a server port listens on. Selected by labels: the targetPort of the first target
 * declaring the port, else the port itself. Bound to services: every matching targetPort, or none.
 */
function resolvePorts(number: number, targets: readonly ServiceTarget[], legacySelector: boolean): number[] {
  const ports = new Set<number>();
  for (const { port } of targets) {
    if (port.port !== number) continue;
    const target = typeof port.targetPort === "number" && port.targetPort > 0 ? port.targetPort : port.port;
    if (legacySelector) return [target];
    ports.add(target);
  }
  if (ports.size === 0 && legacySelector) return [number];
  return [...ports];
}

function sanitizeHosts(server: GatewayServers, namespace: string): GatewayServers {
  if (!server.hosts.some((h) => h.includes("/"))) return server;
  const hosts: string[] = [];
  for (const h of server.hosts) {
    const [ns, name] = h.split("/");
    if (name === undefined) hosts.push(h);
    else if (ns === ".") hosts.push(`${namespace}/${name}`);
    else if (ns === "*" && name === "*") return { ...server, hosts: ["*"] };
    else if (ns === "*") hosts.push(name);
    else hosts.push(h);
  }
  return { ...server, hosts };
}

function sniHosts(server: GatewayServers): string[] {
  const hosts = new Set(server.hosts.map((h) => (h.includes("/") ? h.split("/")[1] : h)));
  return [...hosts].sort();
}

function targetPortMap(serversByRouteName: ReadonlyMap<string, readonly MergedServer[]>): Map<number, Set<number>> {
  const map = new Map<number, Set<number>>();
  for (const [routeName, servers] of serversByRouteName) {
    const number = routePortNumber(routeName);
    const set = map.get(number) ?? new Set<number>();
    map.set(number, set);
    for (const { server } of servers) set.add(server.port.number);
  }
  return map;
}

/** The port of `http.<port>` or `https.<port>.<name>.<gw>.<ns>` route names; 0 for others (Istio's ParseGatewayRDSRouteName). */
function routePortNumber(routeName: string): number {
  const parts = routeName.split(".");
  const number =
    parts[0] === "http" && parts.length === 2
      ? Number(parts[1])
      : parts[0] === "https" && parts.length === 5
        ? Number(parts[1])
        : 0;
  return Number.isInteger(number) ? number : 0;
}
