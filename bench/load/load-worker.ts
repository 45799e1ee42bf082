// The load process: N sidecar ADS streams against one server, driven by run-load.ts over IPC (see
// messages.ts). It reports when all are synced, and after a change how long each proxy that can see
// the changed service took to receive it, and how many bytes the change cost.
import { writeFileSync } from "node:fs";
import type { ProxyIdentity } from "./mesh.ts";
import { type BytesByType, type FromWorker, nowMs, type Recording, type ToWorker } from "./messages.ts";
import { SidecarStream, shortTypeOf } from "./sidecar-stream.ts";

/** How long to wait for all proxies to sync (2,000 unscoped proxies receive ~9 GB), and for a change. */
const SYNC_TIMEOUT_MS = 600_000;
const CHANGE_TIMEOUT_MS = 120_000;
/** A change's responses are counted until the streams have been quiet this long. */
const QUIET_MS = 1000;

const reply = (message: FromWorker) => process.send?.(message);
const add = (counts: BytesByType, type: string, n: number) => {
  counts[type] = (counts[type] ?? 0) + n;
};

let streams: SidecarStream[] = [];
/** Counters of the current phase (sync or one change). */
let bytes: BytesByType = {};
let responses: BytesByType = {};
let lastResponseAt = 0;
/** The change being watched: when each proxy that sees it received it. */
let watch: { marker: Buffer; since: number; arrivals: Map<SidecarStream, number> } | undefined;
let recording: { path: string; shapes: Recording } | undefined;

function connect(message: Extract<ToWorker, { type: "connect" }>): void {
  const start = nowMs();
  let synced = 0;
  let failed = 0;
  let retries = 0;
  /** Why streams were opened again, by message, and how often. */
  const retryReasons = new Map<string, number>();
  let reported = false;
  const done = () => {
    if (reported || synced + failed < streams.length) return;
    reported = true;
    clearTimeout(timer);
    if (recording) writeFileSync(recording.path, JSON.stringify(recording.shapes));
    for (const [reason, n] of retryReasons) console.error(`load: ${n} streams opened again after: ${reason}`);
    reply({ type: "synced", ms: nowMs() - start, synced, failed, retries, bytes });
  };
  const timer = setTimeout(() => {
    failed = streams.length - synced;
    done();
  }, SYNC_TIMEOUT_MS);
  recording = message.recordTo ? { path: message.recordTo, shapes: {} } : undefined;
  /** The first stream of each namespace is the one recorded for it. */
  const recorded = new Set<SidecarStream>();
  streams = message.proxies.map(
    (proxy: ProxyIdentity) =>
      new SidecarStream(proxy, message.protocol, {
        onResponse(stream, typeUrl, data) {
          lastResponseAt = nowMs();
          add(bytes, shortTypeOf(typeUrl), data.length);
          add(responses, shortTypeOf(typeUrl), 1);
          const shape = recorded.has(stream) ? recording?.shapes[stream.proxy.namespace] : undefined;
          if (shape) shape[typeUrl] ??= data.toString("base64");
          if (watch && !watch.arrivals.has(stream) && data.includes(watch.marker)) watch.arrivals.set(stream, nowMs());
        },
        onSynced() {
          synced++;
          done();
        },
        onRetry(stream, error) {
          if (stream.synced || reported) {
            console.error(`load: ${stream.proxy.id} opened again after its sync: ${error?.message ?? "ended"}`);
            return;
          }
          retries++;
          const reason = error?.message ?? "ended by the server";
          retryReasons.set(reason, (retryReasons.get(reason) ?? 0) + 1);
        },
      }),
  );
  if (recording) {
    for (const stream of streams) {
      if (recording.shapes[stream.proxy.namespace]) continue;
      recording.shapes[stream.proxy.namespace] = {};
      recorded.add(stream);
    }
  }
  for (const stream of streams) stream.open(message.address);
}

/** Waits for the marker at every proxy subscribed to the cluster, then for quiet; reports. */
function startWatch(message: Extract<ToWorker, { type: "watch" }>): void {
  bytes = {};
  responses = {};
  const current = { marker: Buffer.from(message.marker), since: message.since, arrivals: new Map() };
  watch = current;
  const expected = streams.filter((s) => s.edsNames.has(message.cluster));
  const deadline = nowMs() + CHANGE_TIMEOUT_MS;
  const poll = setInterval(() => {
    const arrived = expected.every((s) => current.arrivals.has(s));
    const quiet = nowMs() - Math.max(lastResponseAt, message.since) > QUIET_MS;
    if (!(arrived && quiet) && nowMs() < deadline) return;
    clearInterval(poll);
    watch = undefined;
    const latenciesMs = expected.flatMap((s) => {
      const at = current.arrivals.get(s);
      return at === undefined ? [] : [at - message.since];
    });
    reply({
      type: "converged",
      latenciesMs,
      missing: expected.length - latenciesMs.length,
      bytes,
      responses,
    });
  }, 50);
}

process.on("message", (message: ToWorker) => {
  if (message.type === "connect") connect(message);
  else if (message.type === "watch") startWatch(message);
  else {
    for (const stream of streams) stream.close();
    process.exit(0);
  }
});
