// Delta (incremental) ADS (DeltaAggregatedResources), as Istio's delta.go: subscriptions change by
// subscribe/unsubscribe lists, the proxy reports what it holds on reconnect, and the server sends
// only resources whose version changed plus the names the proxy must drop.
import type { discovery } from "../../api/index.ts";
import type { PushRequest } from "../../model/index.ts";
import { type EncodedResource, encodeDeltaResponse, encodeResources } from "../encode.ts";
import type { DeltaGenerateResult, GenerateResult } from "../generator.ts";
import { isWildcardTypeUrl, resourceNamespace, shortType, subscribesByNamespace } from "../types.ts";
import { type Connection, Watch } from "./connection.ts";
import {
  controlPlaneFor,
  findGenerator,
  isHealthReport,
  markWarmingDependent,
  recordAck,
  recordExpiredNonce,
  recordNack,
  requestPush,
  resourceErrors,
  runGenerator,
  sendResponse,
  type XdsEnv,
} from "./env.ts";

export async function handleDeltaRequest<Snapshot>(
  env: XdsEnv<Snapshot>,
  conn: Connection<Snapshot>,
  req: discovery.DeltaDiscoveryRequest,
): Promise<void> {
  const typeUrl = req.typeUrl;
  if (isHealthReport(env, conn, typeUrl, req.errorDetail)) return;
  const w = conn.watches.get(typeUrl);
  if (req.errorDetail) {
    recordNack(env, conn, typeUrl, w?.sent?.version ?? "", req.responseNonce, req.errorDetail);
    return;
  }
  if (!w) {
    // First request for the type, or a reconnect. Per the xDS spec a wildcard type with no
    // explicit subscription is wildcard; subscribing and unsubscribing "*" at once asks for nothing.
    const watch = new Watch(typeUrl, [], true);
    watch.wildcard = isWildcardTypeUrl(typeUrl) && req.resourceNamesSubscribe.length === 0;
    const { subscribed } = applySubscriptions(watch, req);
    // On reconnect the proxy tells what it holds: those are not resent unless they changed.
    const held = Object.entries(req.initialResourceVersions);
    if (held.length > 0) {
      const names = new Set(watch.resourceNames);
      for (const [name, version] of held) {
        watch.setKnown(name, version);
        if (!covers(watch, name)) names.add(name);
      }
      if (names.size > watch.resourceNames.size) watch.resourceNames = names;
    }
    conn.watches.set(typeUrl, watch);
    markWarmingDependent(conn, typeUrl);
    const known = watch.known.size;
    env.log.debug(
      { connection: conn.id, type: shortType(typeUrl), known },
      known > 0 ? "ADS: delta RECONNECT" : "ADS: delta INIT",
    );
    await pushDeltaType(env, conn, watch, requestPush(conn), { force: true, subscribed });
    return;
  }
  if (req.responseNonce !== "" && req.responseNonce !== w.sent?.nonce) {
    recordExpiredNonce(env, conn, w, req.responseNonce);
    return;
  }
  if (req.responseNonce !== "") recordAck(w, w.sent?.version ?? "", req.responseNonce);
  const { changed, subscribed } = applySubscriptions(w, req);
  const alwaysRespond = w.alwaysRespond;
  w.alwaysRespond = false;
  if (!changed && !alwaysRespond) return;
  markWarmingDependent(conn, typeUrl);
  await pushDeltaType(env, conn, w, requestPush(conn), { force: alwaysRespond, subscribed });
}

/** Applies resource_names_subscribe/unsubscribe ("*" toggles wildcard); returns the names newly subscribed. */
function applySubscriptions(
  w: Watch,
  req: discovery.DeltaDiscoveryRequest,
): { changed: boolean; subscribed: string[] } {
  const wildcardType = isWildcardTypeUrl(w.typeUrl);
  const subscribed: string[] = [];
  let changed = false;
  // The watch's set is replaced, not changed in place: a copy on the first name added or dropped.
  let names: Set<string> | undefined;
  const editable = () => {
    names ??= new Set(w.resourceNames);
    return names;
  };
  for (const name of req.resourceNamesSubscribe) {
    if (name === "*") {
      changed ||= wildcardType && !w.wildcard;
      w.wildcard = wildcardType;
    } else if (!(names ?? w.resourceNames).has(name)) {
      editable().add(name);
      subscribed.push(name);
      changed = true;
    }
  }
  for (const name of req.resourceNamesUnsubscribe) {
    if (name === "*") {
      changed ||= w.wildcard;
      w.wildcard = false;
    } else if ((names ?? w.resourceNames).has(name)) {
      editable().delete(name);
      changed = true;
    }
    // The proxy forgets what it unsubscribed from (a VHDS namespace: all of it); a later subscribe must send it again.
    if (!w.wildcard) {
      w.setKnown(name, undefined);
      if (subscribesByNamespace(w.typeUrl)) {
        for (const held of [...w.knownNames()]) if (resourceNamespace(held) === name) w.setKnown(held, undefined);
      }
    }
  }
  if (names) w.resourceNames = names;
  return { changed, subscribed };
}

/** Whether the watch asks for the resource `name`: wildcard, by name, or by its VHDS namespace. */
function covers(w: Watch, name: string): boolean {
  if (w.wildcard || w.resourceNames.has(name)) return true;
  const namespace = subscribesByNamespace(w.typeUrl) ? resourceNamespace(name) : undefined;
  return namespace !== undefined && w.resourceNames.has(namespace);
}

/** A push the server started (not an answer to a request). */
const PUSHED: DeltaTrigger = Object.freeze({ force: false, subscribed: Object.freeze([]) });

interface DeltaTrigger {
  /** Answer even with nothing: the first request for a type, or one Envoy needs answered to finish warming. */
  force: boolean;
  /** Names just subscribed to: the proxy learns of the missing ones through removed_resources. */
  subscribed: readonly string[];
}

/**
 * Generates one type and sends what changed since what the proxy holds. Nothing changed, nothing
 * sent: then it returns undefined rather than a promise (see pushSotwType).
 */
export function pushDeltaType<Snapshot>(
  env: XdsEnv<Snapshot>,
  conn: Connection<Snapshot>,
  w: Watch,
  req: PushRequest<Snapshot>,
  trigger: DeltaTrigger = PUSHED,
): Promise<void> | undefined {
  const gen = findGenerator(env, conn, w.typeUrl);
  if (!gen) return;
  const startMs = performance.now();
  const generated = runGenerator(env, conn, w.typeUrl, () => {
    // A generator without generateDeltas removes nothing but what its complete answers leave out.
    const result: (GenerateResult & Partial<DeltaGenerateResult>) | undefined = gen.generateDeltas
      ? gen.generateDeltas(conn.proxy, w, req)
      : gen.generate(conn.proxy, w, req);
    return result && { result, encoded: encodeResources(env.memos, result.resources) };
  });
  if (!generated) return;
  const { result, encoded } = generated;
  const errors = resourceErrors(env, conn, w.typeUrl, result, encoded);
  const removed = new Set(result.removed);
  if (!result.logDetails?.incremental) {
    // A complete answer: whatever the proxy holds in scope and did not come back is gone.
    for (const name of w.knownNames()) {
      if (!encoded.versions.has(name) && covers(w, name)) removed.add(name);
    }
  }
  // A name just asked for that came back under another name (an alias: an on-demand address's IP) is
  // there. The aliases are looked for only then: every other push of every type skips the scan.
  let aliases: ReadonlySet<string> | undefined;
  for (const name of trigger.subscribed) {
    if (encoded.versions.has(name)) continue;
    aliases ??= aliasesOf(encoded.resources);
    if (!aliases.has(name)) removed.add(name);
  }
  if (result.subscribe && result.subscribe.length > 0) {
    const names = new Set(w.resourceNames);
    for (const name of result.subscribe) names.add(name);
    w.resourceNames = names;
  }
  // One that failed to build or encode is not gone: the proxy keeps what it holds of it.
  for (const { name } of errors) removed.delete(name);
  // Only names the proxy may hold are worth removing; a name it never had needs no news unless just asked for.
  const toRemove = [...removed].filter((n) => w.knownVersion(n) !== undefined || trigger.subscribed.includes(n)).sort();
  const changed = encoded.resources.filter((r) => w.knownVersion(r.name) !== r.version);
  if (changed.length === 0 && toRemove.length === 0 && !trigger.force) return;

  const nonce = conn.nextNonce();
  const version = req.push.version;
  const bytes = () =>
    encodeDeltaResponse(env.memos, {
      systemVersionInfo: version,
      typeUrl: w.typeUrl,
      nonce,
      // Everything changed (a first response): the list's own array, whose encoded body is shared.
      resources: changed.length === encoded.resources.length ? encoded.resources : changed,
      removed: toRemove,
      controlPlane: controlPlaneFor(env, w.typeUrl),
    });
  w.recordDelta(changed, toRemove, encoded.versions);
  return sendResponse(env, conn, w, bytes, { version, nonce, resources: changed.length, startMs });
}

const NO_ALIASES: ReadonlySet<string> = new Set();

function aliasesOf(resources: readonly EncodedResource[]): ReadonlySet<string> {
  let aliases: Set<string> | undefined;
  for (const r of resources) {
    if (!r.aliases) continue;
    aliases ??= new Set();
    for (const alias of r.aliases) aliases.add(alias);
  }
  return aliases ?? NO_ALIASES;
}
