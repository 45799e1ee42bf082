// State-of-the-world ADS (StreamAggregatedResources), as Istio decides when to answer
// (pkg/xds/server.go ShouldRespond): a request is a first request, a NACK, an ACK, an ACK that
// changes the subscription, a stale nonce, or an unsubscribe.
import type { discovery } from "../../api/index.ts";
import type { PushRequest } from "../../model/push-context.ts";
import { encodeResources, encodeSotwResponse, sotwNonce } from "../encode.ts";
import type { GenerateResult } from "../generator.ts";
import { isWildcardTypeUrl, shortType } from "../types.ts";
import { type Connection, Watch } from "./connection.ts";
import {
  findGenerator,
  markWarmingDependent,
  recordAck,
  recordExpiredNonce,
  recordNack,
  requestPush,
  runGenerator,
  sendResponse,
  type XdsEnv,
} from "./env.ts";

export async function handleSotwRequest(env: XdsEnv, conn: Connection, req: discovery.DiscoveryRequest): Promise<void> {
  const typeUrl = req.typeUrl;
  if (req.errorDetail) {
    recordNack(env, conn, typeUrl, req.versionInfo, req.responseNonce, req.errorDetail);
    return;
  }
  // An empty list on a named-only type (RDS, EDS, SDS, ECDS) drops the subscription.
  if (req.resourceNames.length === 0 && !isWildcardTypeUrl(typeUrl)) {
    conn.watches.delete(typeUrl);
    env.log.debug({ connection: conn.id, type: shortType(typeUrl) }, "ADS: UNSUBSCRIBE");
    return;
  }
  const w = conn.watches.get(typeUrl);
  // First request for the type, or a reconnect to a server that does not know the stream: answer.
  if (req.responseNonce === "" || !w) {
    const watch = new Watch(typeUrl, req.resourceNames);
    conn.watches.set(typeUrl, watch);
    markWarmingDependent(conn, typeUrl);
    await pushSotwType(env, conn, watch, requestPush(conn), true);
    return;
  }
  if (req.responseNonce !== w.sent?.nonce) {
    recordExpiredNonce(env, conn, w, req.responseNonce);
    return;
  }
  recordAck(w, req.versionInfo, req.responseNonce);
  const previous = w.resourceNames;
  const replacement = new Watch(typeUrl, req.resourceNames);
  let added = false;
  for (const n of replacement.resourceNames) added ||= !previous.has(n);
  // With nothing added, a different size means names were dropped.
  const changed = added || previous.size !== replacement.resourceNames.size;
  // An ACK naming the same resources keeps the watch's set (and the strings in it).
  if (changed) w.resourceNames = replacement.resourceNames;
  w.wildcard = replacement.wildcard;
  const alwaysRespond = w.alwaysRespond;
  w.alwaysRespond = false;
  if (!alwaysRespond) {
    if (!changed) return;
    // Dropping names from a named-only type needs no answer: the proxy just stops using them.
    if (!isWildcardTypeUrl(typeUrl) && !added) return;
  }
  markWarmingDependent(conn, typeUrl);
  await pushSotwType(env, conn, w, requestPush(conn), true);
}

/**
 * Generates and sends one type. Pushes (not requests) skip a response identical to the last one
 * sent, so a rejected state is not sent again until the config changes.
 */
export async function pushSotwType(
  env: XdsEnv,
  conn: Connection,
  w: Watch,
  req: PushRequest,
  requested: boolean,
): Promise<void> {
  const gen = findGenerator(env, conn, w.typeUrl);
  if (!gen) return;
  const startMs = performance.now();
  const result = runGenerator(env, conn, w.typeUrl, () => {
    const generated = gen.generate(conn.proxy, w, req);
    return generated && { encoded: encodeResources(generated.resources), incremental: isIncremental(generated) };
  });
  if (!result) return;
  const { encoded, incremental } = result;
  const { resources, versions } = encoded;
  if (requested && !w.wildcard) w.spellNamesAs(resources);
  if (!requested && !req.forced && holds(w.sentVersions, versions, incremental)) return;
  const version = req.push.version;
  const nonce = sotwNonce(version, resources);
  // A complete response's versions map is the encoded list's own (hashed once for every proxy sent it).
  w.sentVersions = incremental && w.sentVersions ? merged(w.sentVersions, versions) : versions;
  const bytes = () =>
    encodeSotwResponse({ versionInfo: version, typeUrl: w.typeUrl, nonce, resources, controlPlane: env.controlPlane });
  await sendResponse(env, conn, w, bytes, { version, nonce, resources: resources.length, startMs });
}

/** An incremental response (EDS) carries only what changed; the proxy keeps the rest. */
function isIncremental(result: GenerateResult): boolean {
  return result.logDetails?.incremental === true;
}

/** Whether the proxy already holds these versions (and, unless the response is incremental, nothing else). */
function holds(
  sent: ReadonlyMap<string, string> | undefined,
  versions: ReadonlyMap<string, string>,
  incremental: boolean,
): boolean {
  if (sent === versions) return true;
  if (!sent || (!incremental && sent.size !== versions.size)) return false;
  for (const [name, version] of versions) if (sent.get(name) !== version) return false;
  return true;
}

/** What the proxy holds after an incremental response: its own copy, as `sent` may be shared. */
function merged(sent: ReadonlyMap<string, string>, versions: ReadonlyMap<string, string>): Map<string, string> {
  const result = new Map(sent);
  for (const [name, version] of versions) result.set(name, version);
  return result;
}
