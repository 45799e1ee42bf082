// What the load orchestrator (run-load.ts) and its child processes (load-worker.ts, replay-server.ts)
// tell each other over the IPC channel of child_process.fork.
import type { ProxyIdentity } from "./mesh.ts";

export type Protocol = "sotw" | "delta";

/** Bytes received, by short type name (CDS, EDS, LDS, RDS, VHDS, other). */
export type BytesByType = Record<string, number>;

/** Absolute time in ms with sub-ms resolution, comparable across processes on one machine. */
export const nowMs = () => performance.timeOrigin + performance.now();

export type ToWorker =
  | {
      type: "connect";
      address: string;
      protocol: Protocol;
      proxies: ProxyIdentity[];
      /** Write the first response of each type, per proxy namespace, to this file (for the replay server). */
      recordTo?: string;
    }
  /** Report when every proxy subscribed to `cluster` has received a response holding `marker`. */
  | { type: "watch"; marker: string; cluster: string; since: number }
  | { type: "close" };

export type FromWorker =
  | {
      type: "synced";
      /** From the first stream opened to the last proxy synced (CDS, EDS, LDS, RDS and any VHDS received and ACKed). */
      ms: number;
      synced: number;
      /** Streams not synced within the time allowed. */
      failed: number;
      /** Streams opened again before their sync (istiod refuses those over its request rate limit). */
      retries: number;
      bytes: BytesByType;
    }
  | {
      type: "converged";
      /** Per proxy that sees the cluster, ms from `since` to the response holding the marker. */
      latenciesMs: number[];
      /** Proxies that see the cluster but never got the marker within the time allowed. */
      missing: number;
      /** Everything received by all proxies from `since` until the streams went quiet. */
      bytes: BytesByType;
      /** Responses received from `since`, by type. */
      responses: BytesByType;
    };

/** A recording: for each proxy namespace, the first response of each type URL, base64. */
export type Recording = Record<string, Record<string, string>>;
