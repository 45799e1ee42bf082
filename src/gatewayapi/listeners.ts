// Gateway (and ListenerSet) listeners → one Istio Server each, with the listener's status: supported
// route kinds, protocol, hostnames per allowed namespace, TLS, and conflicts between listeners.
import type { ConfigObject, gatewayapi } from "../config/index.ts";
import { type Condition, type ConditionSpec, setConditions } from "./conditions.ts";
import { EASTWEST_CONTROLLER, MESH_CONTROLLER } from "./gatewayclass.ts";
import { type ClusterObjects, GATEWAY_GROUP, nameOf, namespaceOf } from "./model.ts";
import type { ReferenceGrants } from "./referencegrant.ts";
import { namespaceLabels, selectorMatches } from "./selector.ts";
import {
  buildServerTls,
  frontendTlsFor,
  REASON_INVALID_CA_CERTIFICATE_KIND,
  REASON_INVALID_CA_CERTIFICATE_REF,
  REASON_REF_NOT_PERMITTED,
  type ServerTls,
} from "./tls.ts";

export type Listener = gatewayapi.Listeners;

export interface RouteGroupKind {
  group: string;
  kind: string;
}

export interface ListenerStatus {
  name: string;
  attachedRoutes: number;
  supportedKinds: RouteGroupKind[];
  conditions: Condition[];
}

/** The statuses of the declared listeners only, the first one of each name (live status may hold stale ones). */
export function declaredListenerStatuses(
  statuses: readonly ListenerStatus[],
  listeners: readonly { name: string }[],
): ListenerStatus[] {
  const names = new Set(listeners.map((l) => l.name));
  return statuses.filter((l) => {
    if (!l || !names.has(l.name)) return false;
    names.delete(l.name);
    return true;
  });
}

/** Istio's Server in protobuf-JSON form. */
export interface Server {
  hosts: string[];
  port: { name: string; number: number; protocol: string };
  tls?: ServerTls;
}

const LISTENER_MODE_OPTION = "gateway.istio.io/listener-protocol";
const NETWORK_LABEL = "topology.istio.io/network";
const GATEWAY_PORT_LABEL = "networking.istio.io/gatewayPort";

function kind(name: string): RouteGroupKind {
  return { group: GATEWAY_GROUP, kind: name };
}

/** The route kinds a listener admits, and whether every kind it asked for is one Istio supports. */
export function supportedKinds(l: Listener): { kinds: RouteGroupKind[]; valid: boolean } {
  let supported: RouteGroupKind[] = [];
  switch (l.protocol) {
    case "HTTP":
    case "HTTPS":
      supported = [kind("HTTPRoute"), kind("GRPCRoute")];
      break;
    case "TCP":
      supported = [kind("TCPRoute")];
      break;
    case "TLS":
      supported = [kind("TLSRoute")];
      if ((l.tls?.mode ?? "") === "Terminate") supported.push(kind("TCPRoute"));
      break;
  }
  const wanted = l.allowedRoutes?.kinds ?? [];
  if (wanted.length === 0) return { kinds: supported, valid: true };
  const kinds = supported.filter((s) =>
    wanted.some((w) => w.kind === s.kind && (w.group ?? GATEWAY_GROUP) === s.group),
  );
  return { kinds, valid: kinds.length === wanted.length };
}

const SUPPORTED_PROTOCOLS = new Set(["HTTP", "HTTPS", "TLS", "TCP", "HBONE"]);

function istioProtocol(controller: string, protocol: string): { protocol: string } | { error: string } {
  if (protocol === "HTTP" || protocol === "HTTPS" || protocol === "TLS" || protocol === "TCP") return { protocol };
  if (protocol === "HBONE") {
    return controller === MESH_CONTROLLER || controller === EASTWEST_CONTROLLER
      ? { protocol }
      : { error: `protocol "${protocol}" is only supported for waypoint proxies` };
  }
  const upper = protocol.toUpperCase();
  if (SUPPORTED_PROTOCOLS.has(upper)) {
    return { error: `protocol "${protocol}" is unsupported. hint: "${upper}" (uppercase) may be supported` };
  }
  return { error: `protocol "${protocol}" is unsupported` };
}

/** Namespaces whose routes a listener admits: a name, "*" or, from a selector, the matching namespaces. */
function allowedNamespaces(
  localNamespace: string,
  namespaces: ClusterObjects["namespaces"],
  allowed: gatewayapi.ListenersAllowedRoutes | undefined,
): string[] {
  const from = allowed?.namespaces?.from;
  if (from === undefined || from === "Same") return [localNamespace];
  if (from === "All") return ["*"];
  const selector = allowed?.namespaces?.selector;
  if (!selector) return ["*"];
  const matching: string[] = [];
  for (const ns of namespaces.values()) {
    const labels = namespaceLabels(nameOf(ns), ns.metadata.labels);
    const result = selectorMatches(selector, labels);
    if (result === undefined) return [];
    if (result) matching.push(nameOf(ns));
  }
  return matching.sort();
}

function serverHosts(localNamespace: string, cluster: ClusterObjects, l: Listener): string[] {
  const hostname = l.hostname ?? "*";
  const hosts = allowedNamespaces(localNamespace, cluster.namespaces, l.allowedRoutes)
    .filter((ns) => ns !== "")
    .map((ns) => `${ns}/${hostname}`);
  // A Server needs a host; "~" matches no namespace, so the listener exists but admits nothing yet.
  return hosts.length > 0 ? hosts : [`~/${hostname}`];
}

function isAutoPassthrough(labels: Readonly<Record<string, string>> | undefined, l: Listener): boolean {
  if (!l.tls) return false;
  if (l.tls.options?.[LISTENER_MODE_OPTION] === "auto-passthrough") return true;
  if (!labels || !Object.hasOwn(labels, NETWORK_LABEL)) return false;
  return String(l.port) === (labels[GATEWAY_PORT_LABEL] ?? "15443");
}

function unexpectedWaypointListener(l: Listener): boolean {
  return l.port !== 15008 || l.protocol !== "HBONE";
}

function unexpectedEastWestListener(l: Listener): boolean {
  if (l.port === 15008) return l.protocol !== "HBONE" || !l.tls || l.tls.mode !== "Terminate";
  return !(l.protocol === "TLS" && l.tls?.mode === "Passthrough");
}

export interface ListenerOwner {
  obj: ConfigObject;
  kind: "Gateway" | "ListenerSet";
  /** The Gateway's spec.tls, for frontend client validation. */
  gatewayTls?: gatewayapi.GatewayTls;
}

export interface BuiltListener {
  server?: Server;
  status: ListenerStatus;
  programmed: boolean;
}

/** A listener's status from its live conditions and the wanted ones (route kinds checked here). */
function reportListener(
  owner: ConfigObject,
  l: Listener,
  liveConditions: readonly Condition[],
  wanted: Record<string, ConditionSpec>,
): ListenerStatus {
  const { kinds, valid } = supportedKinds(l);
  if (!valid) wanted.ResolvedRefs = { reason: "InvalidRouteKinds", status: "False", message: "Invalid route kinds" };
  return {
    name: l.name,
    attachedRoutes: 0,
    supportedKinds: kinds,
    conditions: setConditions(owner.metadata.generation, liveConditions, wanted),
  };
}

export function conflictedListener(
  owner: ConfigObject,
  l: Listener,
  liveConditions: readonly Condition[],
  reason: string,
): ListenerStatus {
  const message = "Listener has a conflict with another listener attached to the same Gateway";
  return reportListener(owner, l, liveConditions, {
    Accepted: { reason: "", message: "", error: { reason, message } },
    Programmed: { reason: "", message: "", error: { reason, message } },
    Conflicted: { reason, message, status: "True" },
  });
}

export function buildListener(
  owner: ListenerOwner,
  l: Listener,
  liveConditions: readonly Condition[],
  controller: string,
  cluster: ClusterObjects,
  grants: ReferenceGrants,
  portError?: string,
): BuiltListener {
  const ok = "No errors found";
  const conditions: Record<string, ConditionSpec> = {
    Accepted: { reason: "Accepted", message: ok },
    Programmed: { reason: "Programmed", message: ok },
    Conflicted: { reason: "NoConflicts", message: ok, status: "False" },
    ResolvedRefs: { reason: "ResolvedRefs", message: ok },
  };
  let programmed = true;
  const namespace = namespaceOf(owner.obj);
  const tlsResult = buildServerTls(
    l.tls,
    frontendTlsFor(l.port, owner.gatewayTls),
    { kind: owner.kind, namespace },
    cluster,
    grants,
    isAutoPassthrough(owner.obj.metadata.labels, l),
  );
  if (tlsResult.error) {
    const err = tlsResult.error;
    conditions.ResolvedRefs.error = err;
    conditions.Programmed.error = { reason: "Invalid", message: "Bad TLS configuration" };
    if (
      err.reason === REASON_INVALID_CA_CERTIFICATE_REF ||
      err.reason === REASON_INVALID_CA_CERTIFICATE_KIND ||
      err.reason === REASON_REF_NOT_PERMITTED
    ) {
      conditions.Accepted.error = { reason: "NoValidCACertificate", message: err.message };
    }
    programmed = false;
  }
  if (portError) {
    conditions.Accepted.error = { reason: "UnsupportedProtocol", message: portError };
    programmed = false;
  }
  const protocol = istioProtocol(controller, l.protocol);
  if ("error" in protocol) {
    conditions.Accepted.error = { reason: "UnsupportedProtocol", message: protocol.error };
    programmed = false;
  }
  if (controller === MESH_CONTROLLER && unexpectedWaypointListener(l)) {
    conditions.Accepted.error = {
      reason: "UnsupportedProtocol",
      message: 'Expected a single listener on port 15008 with protocol "HBONE"',
    };
  }
  if (controller === EASTWEST_CONTROLLER && unexpectedEastWestListener(l)) {
    conditions.Accepted.error = {
      reason: "UnsupportedProtocol",
      message:
        'East-west gateway listeners must be either port 15008 with protocol "HBONE" and TLS.Mode == Terminate, or TLS with TLS.Mode == Passthrough',
    };
  }
  let server: Server | undefined = {
    hosts: serverHosts(namespace, cluster, l),
    port: { name: "default", number: l.port, protocol: "protocol" in protocol ? protocol.protocol : "" },
    ...(tlsResult.tls ? { tls: tlsResult.tls } : {}),
  };
  if (!tlsResult.tls && (l.protocol === "HTTPS" || l.protocol === "TLS")) {
    // Without a TLS section there is nothing to serve; a ListenerSet listener is then invalid.
    server = undefined;
    if (owner.kind === "ListenerSet") {
      programmed = false;
      conditions.Accepted.error = {
        reason: "UnsupportedProtocol",
        message: `protocol is ${l.protocol} but no TLS section is defined`,
      };
      conditions.Programmed.error = { reason: "Invalid", message: "Bad TLS configuration" };
    }
  }
  return { server, status: reportListener(owner.obj, l, liveConditions, conditions), programmed };
}

// --- conflicts between listeners of one Gateway and its ListenerSets ---

export interface ConflictOwnerListeners {
  ownerKind: "Gateway" | "ListenerSet";
  ownerKey: string;
  listeners: readonly Listener[];
}

function hostnameOf(l: Listener): string {
  return l.hostname ? l.hostname : "*";
}

const isTcpUdp = (p: string) => p === "TCP" || p === "UDP";
const isHttpLike = (p: string) => p === "HTTP" || p === "HTTPS" || p === "TLS";

function distinct(a: Listener, b: Listener): boolean {
  if (a.port !== b.port) return true;
  if ((isTcpUdp(a.protocol) && isHttpLike(b.protocol)) || (isHttpLike(a.protocol) && isTcpUdp(b.protocol)))
    return false;
  if (isTcpUdp(a.protocol) && isTcpUdp(b.protocol)) return false;
  if (isHttpLike(a.protocol) && isHttpLike(b.protocol)) return hostnameOf(a) !== hostnameOf(b);
  return a.protocol !== b.protocol;
}

function conflictReason(a: Listener, b: Listener): string {
  if (isTcpUdp(a.protocol) && isTcpUdp(b.protocol)) return "ProtocolConflict";
  return a.protocol !== b.protocol ? "ProtocolConflict" : "HostnameConflict";
}

/** "<Kind>/<ns>/<name>" → listener name → conflict reason, for listeners that lose to an earlier one. */
export function listenerConflicts(owners: readonly ConflictOwnerListeners[]): Map<string, Map<string, string>> {
  const conflicts = new Map<string, Map<string, string>>();
  const accepted: Listener[] = [];
  for (const owner of owners) {
    for (const l of owner.listeners) {
      const prior = accepted.find((p) => !distinct(l, p));
      if (prior) {
        const key = `${owner.ownerKind}/${owner.ownerKey}`;
        const forOwner = conflicts.get(key) ?? new Map<string, string>();
        forOwner.set(l.name, conflictReason(l, prior));
        conflicts.set(key, forOwner);
        continue;
      }
      accepted.push(l);
    }
  }
  return conflicts;
}
