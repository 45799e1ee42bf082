// Which pushes can change a proxy's clusters, listeners, routes or load assignments (Istio's
// cdsNeedsPush, ldsNeedsPush, rdsNeedsPush and edsNeedsPush, pilot/pkg/xds/{cds,lds,rds,eds}.go): a
// full push naming only config kinds the type never reads leaves it alone; endpoint-only pushes
// concern EDS alone. Also what a push names: the hostnames of an endpoint push, a proxy's own request.
import { kindKey } from "../../config/index.ts";
import type { MeshPushRequest, ProxyNode, PushRequest } from "../../model/index.ts";
import { ADDRESS_KIND, PUSH_KINDS } from "../../model/index.ts";
import { KIND } from "../pipeline/classify.ts";

const NET = "networking.istio.io";
const SECRET = kindKey("", "Secret");
const WORKLOAD_ENTRY = kindKey(NET, "WorkloadEntry");
const WORKLOAD_GROUP = kindKey(NET, "WorkloadGroup");
const PROXY_CONFIG = kindKey(NET, "ProxyConfig");
const KUBERNETES_GATEWAY = kindKey("gateway.networking.k8s.io", "Gateway");

const CDS_SKIPPED: ReadonlySet<string> = new Set([
  PUSH_KINDS.gateway,
  WORKLOAD_ENTRY,
  WORKLOAD_GROUP,
  PUSH_KINDS.authorizationPolicy,
  PUSH_KINDS.requestAuthentication,
  SECRET,
  PUSH_KINDS.telemetry,
  PUSH_KINDS.wasmPlugin,
  PUSH_KINDS.trafficExtension,
  PROXY_CONFIG,
  KUBERNETES_GATEWAY,
]);

const LDS_SKIPPED_ROUTER: ReadonlySet<string> = new Set([WORKLOAD_GROUP, WORKLOAD_ENTRY, SECRET, PROXY_CONFIG]);
const LDS_SKIPPED_SIDECAR: ReadonlySet<string> = new Set([...LDS_SKIPPED_ROUTER, PUSH_KINDS.gateway]);

const RDS_SKIPPED: ReadonlySet<string> = new Set([
  WORKLOAD_ENTRY,
  WORKLOAD_GROUP,
  PUSH_KINDS.authorizationPolicy,
  PUSH_KINDS.requestAuthentication,
  PUSH_KINDS.peerAuthentication,
  SECRET,
  PUSH_KINDS.wasmPlugin,
  PUSH_KINDS.trafficExtension,
  PUSH_KINDS.telemetry,
  PROXY_CONFIG,
]);

// Istio's skippedEdsConfigs, less DNSName (Sluice has no such kind).
const EDS_SKIPPED: ReadonlySet<string> = new Set([
  PUSH_KINDS.gateway,
  PUSH_KINDS.virtualService,
  WORKLOAD_GROUP,
  PUSH_KINDS.authorizationPolicy,
  PUSH_KINDS.requestAuthentication,
  SECRET,
  PUSH_KINDS.telemetry,
  PUSH_KINDS.wasmPlugin,
  PUSH_KINDS.trafficExtension,
  PROXY_CONFIG,
]);

/** A forced push, or a full one naming nothing (everything) or some kind outside `skipped`. */
function fullPushTouches(req: PushRequest, skipped: ReadonlySet<string>, alsoRead?: string): boolean {
  if (req.forced) return true;
  if (!req.full) return false;
  if (req.configsUpdated.size === 0) return true;
  return [...req.configsUpdated.values()].some((k) => !skipped.has(k.kind) || k.kind === alsoRead);
}

/** Gateways change a router's clusters only through AUTO_PASSTHROUGH servers (SNI-DNAT clusters). */
export function cdsNeedsPush(req: PushRequest, proxy: ProxyNode, autoPassthrough: () => boolean): boolean {
  const gateway = proxy.type === "router" && autoPassthrough() ? PUSH_KINDS.gateway : undefined;
  return fullPushTouches(req, CDS_SKIPPED, gateway);
}

export function ldsNeedsPush(req: PushRequest, proxy: ProxyNode): boolean {
  return fullPushTouches(req, proxy.type === "sidecar" ? LDS_SKIPPED_SIDECAR : LDS_SKIPPED_ROUTER);
}

export function rdsNeedsPush(req: PushRequest): boolean {
  return fullPushTouches(req, RDS_SKIPPED);
}

/** Incremental (endpoint) pushes always concern EDS; full ones unless they name only kinds it never reads. */
export function edsNeedsPush(req: PushRequest): boolean {
  return !req.full || fullPushTouches(req, EDS_SKIPPED);
}

/**
 * Istio's waypointNeedsPush (scoped address pushes, its default): an address push concerns a waypoint
 * proxy's clusters, listeners and load assignments when a changed address was or is bound to it.
 */
export function waypointNeedsPush(req: MeshPushRequest, proxy: ProxyNode): boolean {
  if (proxy.type !== "waypoint" || !req.waypointsUpdated || req.waypointsUpdated.size === 0) return false;
  if (![...req.configsUpdated.values()].some((k) => k.kind === ADDRESS_KIND)) return false;
  return req.push.snapshot.waypointUpdated(proxy, req.waypointsUpdated);
}

/** The hostnames an incremental push names (endpoint pushes key services by hostname). */
export function changedHostnames(req: PushRequest): Set<string> {
  const hosts = new Set<string>();
  for (const key of req.configsUpdated.values()) if (key.kind === KIND.serviceEntry) hosts.add(key.name);
  return hosts;
}

/** Istio's PushRequest.IsRequest: the push answers one proxy's own request and nothing else. */
export function isProxyRequest(req: PushRequest): boolean {
  return req.reasons.size === 1 && req.reasons.get("proxyrequest") === 1;
}
