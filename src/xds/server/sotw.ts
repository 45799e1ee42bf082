// State-of-the-world ADS (StreamAggregatedResources), as Istio decides when to answer
// (pkg/xds/server.go ShouldRespond): a request is a first request, a NACK, an ACK, an ACK that
// changes the subscription, a stale nonce, or an unsubscribe.
import type { discovery } from "../../api/index.ts";
import type { PushRequest } from "../../model/index.ts";
import { OverlayMap } from "../../util/index.ts";
import { encodeResources, encodeSotwResponse, sotwNonce } from "../encode.ts";
import type { GenerateResult, ResourceError } from "../generator.ts";
import { isWildcardTypeUrl, shortType } from "../types.ts";
import { type Connection, isWildcardRequest, namedResources, Watch } from "./connection.ts";
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

export async function handleSotwRequest<Snapshot>(
  env: XdsEnv<Snapshot>,
  conn: Connection<Snapshot>,
  req: discovery.DiscoveryRequest,
): Promise<void> {
  const typeUrl = req.typeUrl;
  if (isHealthReport(env, conn, typeUrl, req.errorDetail)) return;
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
    watch.namedBy = req.resourceNames;
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
  let added = false;
  let changed = false;
  // An ACK naming the same resources (the usual case) keeps the watch's set and the strings in it,
  // and builds no set of its own: an unscoped proxy's EDS ACK names 1,000 clusters.
  if (req.resourceNames !== w.namedBy && !namesSame(w.resourceNames, req.resourceNames)) {
    const previous = w.resourceNames;
    const replacement = namedResources(req.resourceNames);
    for (const n of replacement) added ||= !previous.has(n);
    // With nothing added, a different size means names were dropped.
    changed = added || previous.size !== replacement.size;
    if (changed) w.resourceNames = replacement;
    w.namedBy = req.resourceNames;
  }
  w.wildcard = isWildcardRequest(typeUrl, req.resourceNames);
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
 * sent, so a rejected state is not sent again until the config changes. Returns the send, or
 * undefined when nothing is sent: an endpoint push asks every watch of its 200 proxies, and an
 * async call for each of the three types that send nothing made a frame and a promise each.
 */
export function pushSotwType<Snapshot>(
  env: XdsEnv<Snapshot>,
  conn: Connection<Snapshot>,
  w: Watch,
  req: PushRequest<Snapshot>,
  requested: boolean,
): Promise<void> | undefined {
  const gen = findGenerator(env, conn, w.typeUrl);
  if (!gen) return;
  const startMs = performance.now();
  const result = runGenerator(env, conn, w.typeUrl, () => {
    const generated = gen.generate(conn.proxy, w, req);
    return generated && { generated, encoded: encodeResources(env.memos, generated.resources) };
  });
  if (!result) return;
  const { generated, encoded } = result;
  const incremental = isIncremental(generated);
  const errors = resourceErrors(env, conn, w.typeUrl, generated, encoded);
  if (errors.length > 0 && dropsHeld(w, errors)) {
    env.log.warn(
      { connection: conn.id, type: shortType(w.typeUrl), resources: errors.map((e) => e.name) },
      "ADS: response held back: it would delete resources the proxy holds; the proxy keeps the type as it is",
    );
    return;
  }
  const { resources, versions } = encoded;
  if (!requested && !req.forced && holds(w.sentVersions, versions, incremental)) return;
  const version = req.push.version;
  const nonce = sotwNonce(env.memos, version, resources);
  // A complete response's map is the encoded list's own (made once for every proxy sent it); an
  // incremental one (an endpoint change) costs the proxy its changed entries over it.
  if (!w.sentVersions) w.sentVersions = new OverlayMap(versions);
  else if (incremental) for (const r of resources) w.sentVersions.set(r.name, r.version);
  else w.sentVersions.reset(versions);
  const bytes = () =>
    encodeSotwResponse(env.memos, {
      versionInfo: version,
      typeUrl: w.typeUrl,
      nonce,
      resources,
      controlPlane: controlPlaneFor(env, w.typeUrl),
    });
  return sendResponse(env, conn, w, bytes, { version, nonce, resources: resources.length, startMs });
}

/**
 * Whether leaving out the resources that failed to build or encode would delete some the proxy holds:
 * a CDS or LDS response is the whole state of its type. (RDS and EDS responses name what they carry;
 * the proxy keeps the others.)
 */
function dropsHeld(w: Watch, errors: readonly ResourceError[]): boolean {
  return isWildcardTypeUrl(w.typeUrl) && errors.some(({ name }) => w.sentVersions?.has(name));
}

/** An incremental response (EDS) carries only what changed; the proxy keeps the rest. */
function isIncremental(result: GenerateResult): boolean {
  return result.logDetails?.incremental === true;
}

/** Whether the proxy already holds these versions (and, unless the response is incremental, nothing else). */
function holds(
  sent: OverlayMap<string> | undefined,
  response: ReadonlyMap<string, string>,
  incremental: boolean,
): boolean {
  if (sent?.unchanged && sent.base === response) return true;
  if (!sent || (!incremental && sent.size !== response.size)) return false;
  for (const [name, version] of response) if (sent.get(name) !== version) return false;
  return true;
}

/** Whether a request's names ("*" aside) are exactly `current`; false too when it repeats a name. */
function namesSame(current: ReadonlySet<string>, names: readonly string[]): boolean {
  let count = 0;
  for (const name of names) {
    if (name === "*") continue;
    if (!current.has(name)) return false;
    count++;
  }
  return count === current.size;
}
