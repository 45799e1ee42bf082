// Waypoints (Istio's ambient waypoints.go): any Gateway with an address can be one; a Service, a
// workload or a namespace names the one its traffic goes through with the `istio.io/use-waypoint`
// label, and the waypoint says which traffic it takes (`istio.io/waypoint-for`: service by default)
// and from which namespaces (its HBONE listener's allowedRoutes).
import { create } from "@bufbuild/protobuf";
import { workloadapi } from "../api/index.ts";
import type { ConfigObject } from "../config/index.ts";
import type { gatewayapi } from "../config/types/index.ts";
import type { Collection, FetchContext, Index, Labels } from "../krt/index.ts";
import { type LabelSelector, selectorMatches } from "../sources/kube/index.ts";
import { parseGoBool } from "../util/index.ts";
import { ipAddressBytes } from "./ip-bytes.ts";
import type { StatusMessage } from "./model.ts";

export const LABEL_USE_WAYPOINT = "istio.io/use-waypoint";
const LABEL_USE_WAYPOINT_NAMESPACE = "istio.io/use-waypoint-namespace";
export const LABEL_WAYPOINT_FOR = "istio.io/waypoint-for";
export const LABEL_GATEWAY_NAME = "gateway.networking.k8s.io/gateway-name";
const LABEL_MANAGED = "gateway.istio.io/managed";
const LABEL_INGRESS_USE_WAYPOINT = "istio.io/ingress-use-waypoint";
const ANNOTATION_INBOUND_BINDING = "ambient.istio.io/waypoint-inbound-binding";
/** Envoy's HBONE port on a waypoint. */
const HBONE_PORT = 15008;

/** The traffic a waypoint takes. */
export type TrafficType = "service" | "workload" | "all" | "none" | (string & {});

export interface Waypoint {
  name: string;
  namespace: string;
  /** Where ztunnel sends the traffic: the Gateway's first hostname address, else its first IP. */
  address: workloadapi.GatewayAddress;
  /** The `ambient.istio.io/waypoint-inbound-binding` of the Gateway (or its class): how its own pods are reached. */
  defaultBinding?: { protocol: workloadapi.ApplicationTunnel_Protocol; port: number };
  trafficType: TrafficType;
  /** The service accounts of its pods, sorted. */
  serviceAccounts: string[];
  /** Which namespaces may send their traffic through it (its HBONE listener's allowedRoutes). */
  allowedRoutes: { from: string; selector?: LabelSelector };
}

/** `namespace/name`, as the waypoint's key. */
export function waypointKey(w: Pick<Waypoint, "namespace" | "name">): string {
  return `${w.namespace}/${w.name}`;
}

/**
 * A Gateway as a waypoint; undefined until it has an address in its status. `traffic` is the
 * `istio.io/waypoint-for` of the Gateway, else of its class, else service.
 */
export function gatewayWaypoint(
  gateway: gatewayapi.Gateway,
  gatewayClass: ConfigObject | undefined,
  serviceAccounts: readonly string[],
  network: string,
): Waypoint | undefined {
  const address = gatewayAddress(gateway, network);
  if (!address) return undefined;
  const binding = inboundBinding(gateway, gatewayClass);
  return {
    name: gateway.metadata.name ?? "",
    namespace: gateway.metadata.namespace ?? "",
    address,
    ...(binding ? { defaultBinding: binding } : {}),
    trafficType:
      gateway.metadata.labels?.[LABEL_WAYPOINT_FOR] ?? gatewayClass?.metadata.labels?.[LABEL_WAYPOINT_FOR] ?? "service",
    serviceAccounts: [...serviceAccounts].sort(),
    allowedRoutes: allowedRoutes(gateway, binding),
  };
}

interface StatusAddress {
  type?: string;
  value?: string;
}

function gatewayAddress(gateway: gatewayapi.Gateway, network: string): workloadapi.GatewayAddress | undefined {
  const addresses = ((gateway.status as { addresses?: StatusAddress[] } | undefined)?.addresses ?? []).filter(
    (a) => a.type !== undefined,
  );
  const hostname = addresses.find((a) => a.type === "Hostname");
  if (hostname) {
    return create(workloadapi.GatewayAddressSchema, {
      destination: {
        case: "hostname",
        value: { namespace: gateway.metadata.namespace ?? "", hostname: hostname.value ?? "" },
      },
      hboneMtlsPort: HBONE_PORT,
    });
  }
  for (const a of addresses) {
    if (a.type !== "IPAddress") continue;
    const ip = ipAddressBytes(a.value ?? "");
    if (!ip) continue;
    return create(workloadapi.GatewayAddressSchema, {
      destination: { case: "address", value: { network, address: ip } },
      hboneMtlsPort: HBONE_PORT,
    });
  }
  return undefined;
}

/** `<protocol>` or `<protocol>/<port>` (NONE or PROXY), from the Gateway's annotation, else its class's. */
function inboundBinding(gateway: ConfigObject, gatewayClass: ConfigObject | undefined): Waypoint["defaultBinding"] {
  const value =
    gateway.metadata.annotations?.[ANNOTATION_INBOUND_BINDING] ??
    gatewayClass?.metadata.annotations?.[ANNOTATION_INBOUND_BINDING];
  if (value === undefined) return undefined;
  const parts = value.split("/");
  if (parts.length > 2) return undefined;
  const protocol =
    parts[0] === "NONE"
      ? workloadapi.ApplicationTunnel_Protocol.NONE
      : parts[0] === "PROXY"
        ? workloadapi.ApplicationTunnel_Protocol.PROXY
        : undefined;
  if (protocol === undefined) return undefined;
  // As Istio: a port that does not parse counts as 0 (none).
  const port = parts.length === 2 && /^[0-9]+$/.test(parts[1] ?? "") ? Number(parts[1]) : 0;
  return { protocol, port: port <= 0xffffffff ? port : 0 };
}

/** The allowedRoutes of the listener the binding names, else of the HBONE listener on 15008, else the same namespace. */
function allowedRoutes(gateway: gatewayapi.Gateway, binding: Waypoint["defaultBinding"]): Waypoint["allowedRoutes"] {
  const listeners = gateway.spec?.listeners ?? [];
  let listener: (typeof listeners)[number] | undefined;
  if (binding?.port) listener = listeners.find((l) => l.port === binding.port);
  else if (binding?.protocol === workloadapi.ApplicationTunnel_Protocol.PROXY)
    listener = listeners.find((l) => l.protocol === "istio.io/PROXY");
  listener ??= listeners.find((l) => l.protocol === "HBONE" && l.port === HBONE_PORT);
  const namespaces = listener?.allowedRoutes?.namespaces;
  if (!namespaces) return { from: "Same" };
  return { from: namespaces.from ?? "Same", ...(namespaces.selector ? { selector: namespaces.selector } : {}) };
}

/**
 * The waypoint an object's labels name (`istio.io/use-waypoint`, in `istio.io/use-waypoint-namespace`
 * or `defaultNamespace`); `none` when they opt out (`istio.io/use-waypoint: none`).
 */
export function useWaypoint(
  labels: Labels,
  defaultNamespace: string,
): { name: string; namespace: string } | "none" | undefined {
  const name = labels[LABEL_USE_WAYPOINT];
  if (name === undefined) return undefined;
  if (name === "none") return "none";
  return { name, namespace: labels[LABEL_USE_WAYPOINT_NAMESPACE] ?? defaultNamespace };
}

/** Whether traffic of namespace `namespace` (labelled `namespaceLabels`) may go through the waypoint. */
export function allowsAttachment(waypoint: Waypoint, namespace: string, namespaceLabels: Labels): boolean {
  switch (waypoint.allowedRoutes.from) {
    case "All":
      return true;
    case "Selector":
      return selectorMatches(waypoint.allowedRoutes.selector ?? {}, namespaceLabels);
    default:
      return waypoint.namespace === namespace;
  }
}

/**
 * `istio.io/ingress-use-waypoint` of a Service, else of its namespace: whether it is set, and whether
 * ingress gateways send through the waypoint (Go's ParseBool of it; invalid: false).
 */
export function ingressUseWaypoint(serviceLabels: Labels, namespaceLabels: Labels): { present: boolean; use: boolean } {
  const value = serviceLabels[LABEL_INGRESS_USE_WAYPOINT] ?? namespaceLabels[LABEL_INGRESS_USE_WAYPOINT];
  return { present: value !== undefined, use: value !== undefined && parseGoBool(value) === true };
}

/** A Gateway a control plane manages as a waypoint or east-west gateway is never bound to a waypoint itself. */
export function isManagedGateway(labels: Labels): boolean {
  const managed = labels[LABEL_MANAGED];
  return managed === "istio.io-mesh-controller" || managed === "istio.io-eastwest-controller";
}

/** What finding an object's waypoint reads: the waypoints, and Namespaces by name. */
export interface WaypointSources {
  waypoints: Collection<Waypoint>;
  namespacesByName: Index<ConfigObject>;
}

/** The waypoint `name` (`namespace/name`) has no address yet, or is no Gateway (Istio's ReportWaypointIsNotReady). */
export function waypointIsNotReady(name: string): StatusMessage {
  return { reason: "WaypointIsNotReady", message: `waypoint "${name}" is not ready` };
}

/** The waypoint's allowedRoutes do not admit the object's namespace. */
export function waypointAttachmentDenied(name: string): StatusMessage {
  return {
    reason: "AttachmentDenied",
    message: `we are not permitted to attach to waypoint "${name}" (missing allowedRoutes?)`,
  };
}

/** The waypoint does not take the object's kind of traffic. */
export function waypointUnsupportedTrafficType(name: string, traffic: string): StatusMessage {
  return {
    reason: "UnsupportedTrafficType",
    message: `attempting to bind to traffic type "${traffic}" which the waypoint "${name}" does not support`,
  };
}

/** What an object's status says of its waypoint (Istio's WaypointBindingStatus): its name, or why it has none. */
export interface WaypointStatus {
  /** `namespace/name` of the waypoint it is bound to. */
  name?: string;
  error?: StatusMessage;
}

/** An object's waypoint, or why it has none although it names one (both absent: it names none). */
export interface WaypointBinding {
  waypoint?: Waypoint;
  error?: StatusMessage;
}

/**
 * The waypoint a Service's (`traffic` service) or a workload's (`traffic` workload) traffic goes
 * through (Istio's fetchWaypointForService and fetchWaypointForWorkload): the one its own
 * `istio.io/use-waypoint` names, else its namespace's; none when it opts out. When the named
 * waypoint is not there (no address yet), does not take traffic from its namespace, or does not take
 * that traffic, the binding says why, as Istio's status does; but a workload that only inherits a
 * service waypoint from its namespace is simply not bound.
 */
export function boundWaypoint(
  ctx: FetchContext,
  sources: WaypointSources,
  namespace: string,
  labels: Labels,
  traffic: "service" | "workload",
): WaypointBinding {
  let named = useWaypoint(labels, namespace);
  if (named === "none") return {};
  const namespaceLabels = () => ctx.fetchIndex(sources.namespacesByName, namespace)[0]?.metadata.labels ?? {};
  if (named === undefined) {
    const fromNamespace = useWaypoint(namespaceLabels(), namespace);
    if (fromNamespace === undefined || fromNamespace === "none") return {};
    named = fromNamespace;
  }
  const name = waypointKey(named);
  const waypoint = ctx.fetch(sources.waypoints, { key: name })[0];
  if (!waypoint) return { error: waypointIsNotReady(name) };
  if (!allowsAttachment(waypoint, namespace, waypoint.allowedRoutes.from === "Selector" ? namespaceLabels() : {}))
    return { error: waypointAttachmentDenied(name) };
  if (waypoint.trafficType === traffic || waypoint.trafficType === "all") return { waypoint };
  if (traffic === "workload" && labels[LABEL_USE_WAYPOINT] === undefined) return {};
  return { error: waypointUnsupportedTrafficType(name, traffic) };
}

/**
 * How a workload's traffic reaches it (Istio's computeWaypoint): a waypoint's own instance (by its
 * gateway-name label) through no waypoint, by the waypoint's inbound binding; any other through the
 * waypoint it is bound to for workload traffic.
 */
export function workloadWaypoint(
  ctx: FetchContext,
  sources: WaypointSources,
  namespace: string,
  labels: Labels,
): {
  waypoint?: workloadapi.GatewayAddress;
  applicationTunnel?: NonNullable<Waypoint["defaultBinding"]>;
  /** Its binding, for its status: the waypoint by name, or why it has none. */
  binding: WaypointStatus;
} {
  const gatewayName = labels[LABEL_GATEWAY_NAME];
  const instanceOf = gatewayName
    ? ctx.fetch(sources.waypoints, { key: waypointKey({ namespace, name: gatewayName }) })[0]
    : undefined;
  if (instanceOf)
    return instanceOf.defaultBinding ? { applicationTunnel: instanceOf.defaultBinding, binding: {} } : { binding: {} };
  const { waypoint, error } = boundWaypoint(ctx, sources, namespace, labels, "workload");
  if (waypoint) return { waypoint: waypoint.address, binding: { name: waypointKey(waypoint) } };
  return { binding: error ? { error } : {} };
}

/**
 * Which waypoint a proxy is (Istio's WaypointKey): its namespace and network, and the hostnames and
 * VIPs of the services that select it (the waypoint's own Service).
 */
export interface WaypointKey {
  namespace: string;
  network: string;
  hostnames: readonly string[];
  addresses: readonly string[];
}

/** The index key of a waypoint named by hostname (in its namespace). */
export function waypointHostnameKey(namespace: string, hostname: string): string {
  return `hostname:${namespace}/${hostname}`;
}

/** The index key of a waypoint named by address (on its network). */
export function waypointAddressKey(network: string, ip: string): string {
  return `address:${network}/${ip}`;
}

/** The index keys a waypoint proxy is known by: its hostnames in its namespace, its addresses on its network. */
export function waypointKeyIndexKeys(key: WaypointKey): string[] {
  return [
    ...key.hostnames.map((h) => waypointHostnameKey(key.namespace, h)),
    ...key.addresses.map((ip) => waypointAddressKey(key.network, ip)),
  ];
}
