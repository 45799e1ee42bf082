// The immutable snapshot a push works on, and the request that starts a push (Istio's
// PushContext and PushRequest, pilot/pkg/model/push_context.go), generic over the snapshot: the ADS
// server and the push pipeline carry a push without knowing how its state is kept. The mesh's push,
// over a PushSnapshot, is MeshPush (mesh-push.ts), which buildPushContext makes.
import { type ObjectKey, type ObjectKeySet, objectKeySet } from "../config/index.ts";
import { PushStatus } from "./push-status.ts";

/** Why a push happened (Istio's TriggerReason values, used as the pilot_push_triggers label). */
export type TriggerReason =
  | "endpoint"
  | "config"
  | "service"
  | "proxy"
  | "global"
  | "ambient"
  | "unknown"
  | "debug"
  | "secret"
  | "networks"
  | "proxyrequest"
  | "namespace"
  | "clusterupdate";

export interface PushContext<Snapshot = unknown> {
  /** `<RFC 3339 time>/<counter>`, as Istio's push versions; sent as `version_info`. */
  readonly version: string;
  readonly createdAt: Date;
  readonly snapshot: Snapshot;
  /** What the builders reported while serving this push (/debug/push_status, the push metrics). */
  readonly status: PushStatus;
}

let versionCounter = 0;

/** A new push context over `snapshot`, with the next push version. */
export function newPushContext<Snapshot>(snapshot: Snapshot, now = new Date()): PushContext<Snapshot> {
  versionCounter++;
  const version = `${now.toISOString().replace(/\.\d{3}Z$/, "Z")}/${versionCounter}`;
  return Object.freeze({ version, createdAt: now, snapshot, status: new PushStatus() });
}

export interface PushRequest<Snapshot = unknown> {
  /** A full push recomputes every watched type; an incremental one only what `configsUpdated` touches (EDS). */
  readonly full: boolean;
  /** The configs that changed. Empty on a full push means "everything may have changed". */
  readonly configsUpdated: ObjectKeySet;
  /** How many events of each reason were merged into this request. */
  readonly reasons: ReadonlyMap<TriggerReason, number>;
  /** When the first change behind this request happened (for pilot_proxy_convergence_time). */
  readonly start: Date;
  readonly push: PushContext<Snapshot>;
  /** Push even when the generators would find nothing changed (debug, cert rotation). */
  readonly forced?: boolean;
  /** The ambient addresses (WDS resource names) that changed: what ztunnel is pushed (Istio's AddressesUpdated). */
  readonly addressesUpdated?: ReadonlySet<string>;
  /**
   * The waypoints the changed addresses were or are bound to (Istio's WaypointsUpdated), as the ambient
   * index's waypoint keys: which waypoint proxies an address push concerns.
   */
  readonly waypointsUpdated?: ReadonlySet<string>;
}

export interface PushRequestInit<Snapshot = unknown> {
  full: boolean;
  push: PushContext<Snapshot>;
  configsUpdated?: Iterable<ObjectKey>;
  reasons?: Iterable<TriggerReason>;
  start?: Date;
  forced?: boolean;
  addressesUpdated?: Iterable<string>;
  waypointsUpdated?: Iterable<string>;
}

export function pushRequest<Snapshot>(init: PushRequestInit<Snapshot>): PushRequest<Snapshot> {
  const reasons = new Map<TriggerReason, number>();
  for (const r of init.reasons ?? []) reasons.set(r, (reasons.get(r) ?? 0) + 1);
  return Object.freeze({
    full: init.full,
    push: init.push,
    configsUpdated: objectKeySet(init.configsUpdated ?? []),
    reasons,
    start: init.start ?? new Date(),
    forced: init.forced,
    ...(init.addressesUpdated ? { addressesUpdated: new Set(init.addressesUpdated) } : {}),
    ...(init.waypointsUpdated ? { waypointsUpdated: new Set(init.waypointsUpdated) } : {}),
  });
}

/**
 * One request covering both, as Istio merges a queued request with a newer one: full wins,
 * the newer push context wins, the older start time stays, and a full request with no keys
 * (everything) absorbs the keys of the other.
 */
export function mergePushRequests<Snapshot>(
  older: PushRequest<Snapshot>,
  newer: PushRequest<Snapshot>,
): PushRequest<Snapshot> {
  const everything = (r: PushRequest<Snapshot>) => r.full && r.configsUpdated.size === 0;
  const configsUpdated: ObjectKeySet =
    everything(older) || everything(newer) ? new Map() : new Map([...older.configsUpdated, ...newer.configsUpdated]);
  const reasons = new Map(older.reasons);
  for (const [r, n] of newer.reasons) reasons.set(r, (reasons.get(r) ?? 0) + n);
  const union = (a: ReadonlySet<string> | undefined, b: ReadonlySet<string> | undefined) =>
    a || b ? new Set([...(a ?? []), ...(b ?? [])]) : undefined;
  const addressesUpdated = union(older.addressesUpdated, newer.addressesUpdated);
  const waypointsUpdated = union(older.waypointsUpdated, newer.waypointsUpdated);
  return Object.freeze({
    full: older.full || newer.full,
    push: newer.push,
    configsUpdated,
    reasons,
    start: new Date(Math.min(older.start.getTime(), newer.start.getTime())),
    forced: older.forced || newer.forced || undefined,
    ...(addressesUpdated ? { addressesUpdated } : {}),
    ...(waypointsUpdated ? { waypointsUpdated } : {}),
  });
}
