// What the SotW and delta protocol handlers share: the generators, metrics and log, and the steps
// both take (NACK bookkeeping, calling a generator, recording a sent response).
import { status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { OutgoingResponse, rpcStatus } from "../../api/index.ts";
import { type PushRequest, pushRequest } from "../../model/index.ts";
import type { Memos } from "../../util/index.ts";
import type { EncodedResources } from "../encode.ts";
import { XdsError } from "../errors.ts";
import type { GenerateResult, Generator, GeneratorRegistry, ResourceError } from "../generator.ts";
import { metricType, shortType, TypeUrl } from "../types.ts";
import type { Connection, Watch } from "./connection.ts";
import type { XdsMetrics } from "./metrics.ts";
import type { ResponseSlots } from "./response-slots.ts";

export interface XdsEnv<Snapshot = unknown> {
  generators: GeneratorRegistry<Snapshot>;
  metrics?: XdsMetrics;
  log: Logger;
  /** Encoded envoy.config.core.v3.ControlPlane, sent with istio.io/debug/syncz responses (controlPlaneFor). */
  controlPlane: Uint8Array;
  /** Bounds the responses being built and written at once. */
  responseSlots: ResponseSlots;
  /** Where encoded lists and kept response bodies are memoised (the server's MemoStore). */
  memos: Memos;
  /** Told of each health report of a connection (the connection hooks' healthReported). */
  healthReported?: (conn: Connection, report: HealthReport) => void;
}

/** What istio-agent reports of its application: healthy, or unhealthy with the probe's message. */
export interface HealthReport {
  healthy: boolean;
  message?: string;
}

/** The type whose responses name the control plane (istioctl proxy-status reads it). */
const SYNC_STATUS_TYPE = `${TypeUrl.Debug}/syncz`;

/**
 * The control plane identifier a response of `typeUrl` carries: only sync status responses, as
 * istiod's ControlPlane(typeUrl) gives; Envoy's and gRPC's types go without its ~150 bytes.
 */
export function controlPlaneFor(env: Pick<XdsEnv, "controlPlane">, typeUrl: string): Uint8Array | undefined {
  return typeUrl === SYNC_STATUS_TYPE ? env.controlPlane : undefined;
}

/** A push for a proxy's own request (new subscription): full, from the connection's push context. */
export function requestPush<Snapshot>(conn: Connection<Snapshot>): PushRequest<Snapshot> {
  return pushRequest({ full: true, push: conn.pushContext, reasons: ["proxyrequest"] });
}

/**
 * A health report of the proxy's application (istio-agent sends HealthInformation on the ADS stream,
 * an error detail when unhealthy): never answered, as istiod; passed on for the proxy's WorkloadEntry.
 */
export function isHealthReport(
  env: XdsEnv,
  conn: Connection,
  typeUrl: string,
  error: rpcStatus.Status | undefined,
): boolean {
  if (typeUrl !== TypeUrl.HealthInfo) return false;
  env.log.debug({ connection: conn.id, healthy: !error, message: error?.message }, "ADS: health report");
  env.healthReported?.(conn, error ? { healthy: false, message: error.message } : { healthy: true });
  return true;
}

/** Records a rejection; nothing is re-sent until the config changes. */
export function recordNack(
  env: XdsEnv,
  conn: Connection,
  typeUrl: string,
  version: string,
  nonce: string,
  error: rpcStatus.Status,
): void {
  env.metrics?.recordReject(typeUrl, conn.proxy.id, error.code);
  env.log.warn(
    { connection: conn.id, type: shortType(typeUrl), nonce, code: error.code, error: error.message },
    "ADS: NACK",
  );
  const w = conn.watches.get(typeUrl);
  if (w) w.lastNack = { version, nonce, time: new Date(), code: error.code, message: error.message };
}

/** The type whose resources Envoy warms with another type: clusters with EDS, listeners with RDS. */
const WARMING_DEPENDENT: ReadonlyMap<string, string> = new Map([
  [TypeUrl.Cluster, TypeUrl.Endpoint],
  [TypeUrl.Listener, TypeUrl.Route],
]);

/**
 * After answering CDS (LDS), Envoy warms the clusters (listeners) by asking for EDS (RDS) again
 * with unchanged names and the last nonce. That request looks like an ACK but must be answered,
 * or warming waits for the initial fetch timeout (envoyproxy/envoy#13009; Istio's AlwaysRespond).
 */
export function markWarmingDependent(conn: Connection, typeUrl: string): void {
  const dependent = WARMING_DEPENDENT.get(typeUrl);
  const w = dependent && conn.watches.get(dependent);
  if (w) w.alwaysRespond = true;
}

export function recordExpiredNonce(env: XdsEnv, conn: Connection, w: Watch, nonce: string): void {
  env.metrics?.expiredNonce.inc({ type: metricType(w.typeUrl) });
  env.log.debug({ connection: conn.id, type: shortType(w.typeUrl), nonce, sent: w.sent?.nonce }, "ADS: expired nonce");
}

export function recordAck(w: Watch, version: string, nonce: string): void {
  w.acked = { version, nonce, time: new Date() };
}

/** The generator for a watch, or undefined (logged) when none serves the type. */
export function findGenerator<Snapshot>(
  env: XdsEnv<Snapshot>,
  conn: Connection<Snapshot>,
  typeUrl: string,
): Generator<Snapshot> | undefined {
  const gen = env.generators.find(conn.proxy, typeUrl);
  if (!gen) env.log.warn({ connection: conn.id, type: typeUrl }, "ADS: no generator for type");
  return gen;
}

/**
 * Runs a generator and encodes its output. A throw is logged and counted, and the type is skipped for
 * this push: the proxy keeps all it holds, as leaving out the resources the generator would have built
 * (whose names it never gave) would delete them from a CDS or LDS state of the world. Generators that
 * build resource by resource (RDS, EDS) report a resource that threw in their result instead, and the
 * encoder leaves out one it cannot encode (see resourceErrors). An XdsError is the generator refusing
 * the proxy: it propagates and ends the stream.
 */
export function runGenerator<T>(env: XdsEnv, conn: Connection, typeUrl: string, run: () => T): T | undefined {
  try {
    return run();
  } catch (err) {
    if (err instanceof XdsError) throw err;
    env.metrics?.internalErrors.inc();
    env.log.error(
      { connection: conn.id, type: shortType(typeUrl), err: err instanceof Error ? err.message : String(err) },
      "ADS: generator failed",
    );
    return undefined;
  }
}

/**
 * The resources left out of a response: those the generator could not build and those that could not
 * be encoded. Each is logged and counted (pilot_total_xds_internal_errors); the others go out.
 */
export function resourceErrors(
  env: XdsEnv,
  conn: Connection,
  typeUrl: string,
  generated: GenerateResult,
  encoded: EncodedResources,
): readonly ResourceError[] {
  const errors = generated.errors?.length ? [...generated.errors, ...encoded.errors] : encoded.errors;
  for (const { name, error } of errors) {
    env.metrics?.internalErrors.inc();
    env.log.error(
      { connection: conn.id, type: shortType(typeUrl), resource: name, err: error },
      "ADS: resource left out of the response",
    );
  }
  return errors;
}

/**
 * Sends a response and records it in the watch and the metrics. Its slot is held until the
 * transport has taken the bytes (or the slot's hold time passes), so at most the slots' worth of
 * responses wait in HTTP/2 buffers for slow proxies.
 */
export async function sendResponse(
  env: XdsEnv,
  conn: Connection,
  w: Watch,
  buildBytes: () => OutgoingResponse,
  info: { version: string; nonce: string; resources: number; startMs: number },
): Promise<void> {
  const release = await env.responseSlots.acquire();
  try {
    await writeResponse(env, conn, w, buildBytes(), info);
  } finally {
    release();
  }
}

async function writeResponse(
  env: XdsEnv,
  conn: Connection,
  w: Watch,
  bytes: OutgoingResponse,
  info: { version: string; nonce: string; resources: number; startMs: number },
): Promise<void> {
  w.sent = {
    version: info.version,
    nonce: info.nonce,
    time: new Date(),
    resources: info.resources,
    bytes: bytes.length,
  };
  const type = metricType(w.typeUrl);
  let delivered: boolean;
  const sendStart = performance.now();
  try {
    delivered = await conn.send(bytes);
  } catch (err) {
    // Istio counts a write that ended with DeadlineExceeded as a write timeout.
    if ((err as { code?: unknown }).code === status.DEADLINE_EXCEEDED) env.metrics?.writeTimeouts.inc();
    env.metrics?.pushes.inc({ type: `${type}_senderr` });
    env.log.warn(
      { connection: conn.id, type, err: err instanceof Error ? err.message : String(err) },
      "ADS: send failed",
    );
    return;
  } finally {
    // Istio times every Send, whatever its outcome (pkg/xds Send, RecordSendTime).
    env.metrics?.sendTime.observe((performance.now() - sendStart) / 1000);
  }
  // A connection closing down is no send error (Istio's isUnexpectedError).
  if (!delivered) {
    env.log.debug(
      { connection: conn.id, type, nonce: info.nonce },
      "ADS: connection closed before the response was sent",
    );
    return;
  }
  env.metrics?.pushes.inc({ type });
  env.metrics?.pushTime.observe({ type }, (performance.now() - info.startMs) / 1000);
  env.metrics?.configSize.observe({ type }, bytes.length);
  // Asked first: the fields would be gathered for every response even with debug logging off.
  if (!env.log.isLevelEnabled("debug")) return;
  env.log.debug(
    {
      connection: conn.id,
      type: shortType(w.typeUrl),
      resources: info.resources,
      size: bytes.length,
      nonce: info.nonce,
    },
    "ADS: PUSH",
  );
}
