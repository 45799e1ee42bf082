// What the load runs (run-load.ts, against-istiod.ts) measure of a control plane process and of its
// load process: CPU time and memory from /proc, and the time a change takes to reach every proxy.
import { type ChildProcess, execFileSync, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { clusterOf } from "./mesh.ts";
import { type BytesByType, type FromWorker, nowMs, type ToWorker } from "./messages.ts";

const HERE = fileURLToPath(new URL("./", import.meta.url));
export const TSX = ["--import", "tsx"];
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const sum = (counts: BytesByType) => Object.values(counts).reduce((a, b) => a + b, 0);

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

function statusMiB(pid: number, field: "VmRSS" | "VmHWM"): number {
  const kB = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kB) / 1024;
}

/** The process's resident memory now. */
export const rssMiB = (pid: number) => statusMiB(pid, "VmRSS");
/** The most resident memory the process has had since it started. */
export const peakRssMiB = (pid: number) => statusMiB(pid, "VmHWM");

/** Where sluiced's memory is: the V8 heap used, memory outside it, and the ArrayBuffers alive (its /metrics). */
export interface SluicedMemory {
  heapUsedMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
}

export async function sluicedMemory(monitoring: string): Promise<SluicedMemory> {
  const text = await (await fetch(`http://${monitoring}/metrics`)).text();
  const mib = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]) / 1024 / 1024;
  return {
    heapUsedMiB: mib("nodejs_heap_size_used_bytes"),
    externalMiB: mib("nodejs_external_memory_bytes"),
    arrayBuffersMiB: mib("sluiced_array_buffers_bytes"),
  };
}

/** CPU use of a process over `ms`, in percent of one core. */
export async function cpuPercentOver(pid: number, ms: number): Promise<number> {
  const start = cpuSeconds(pid);
  await sleep(ms);
  return ((cpuSeconds(pid) - start) / (ms / 1000)) * 100;
}

/** The load process, and a way to ask it something and wait for its answer. */
export class Worker {
  readonly #child = fork(join(HERE, "load-worker.ts"), [], { execArgv: TSX });
  readonly #replies: ((m: FromWorker) => void)[] = [];

  constructor() {
    this.#child.on("message", (m: FromWorker) => this.#replies.shift()?.(m));
  }

  ask<T extends FromWorker["type"]>(message: ToWorker, reply: T): Promise<Extract<FromWorker, { type: T }>> {
    return new Promise((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`load worker exited (${code})`));
      this.#child.once("exit", exited);
      // Answered: the exit listener goes (one stayed per question, and a run asks more than ten).
      this.#replies.push((m) => {
        this.#child.off("exit", exited);
        if (m.type === reply) resolve(m as Extract<FromWorker, { type: T }>);
        else reject(m);
      });
      this.#child.send(message);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#child.removeAllListeners("exit");
      this.#child.once("exit", () => resolve());
      this.#child.send({ type: "close" } satisfies ToWorker);
    });
  }
}

export interface ChangeReport {
  /** How many changes the report pools (their latencies together; bytes and CPU per change). */
  changes: number;
  proxies: number;
  missing: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  bytes: number;
  bytesByType: BytesByType;
  responsesByType: BytesByType;
  /** `bytes` over the bytes of a full sync of every proxy. */
  fractionOfFullPush: number;
  /** CPU the control plane used from the write until the streams went quiet. */
  cpuSeconds: number;
  /** Every proxy's latency, sorted. */
  latenciesMs: readonly number[];
}

export function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/**
 * Makes one change to svc-0 (`write`) and times it to every proxy that sees svc-0: until each has
 * received a response holding `marker` and the streams have gone quiet.
 */
export async function timeChange(
  worker: Worker,
  planePid: number,
  marker: string,
  write: () => unknown,
  fullPushBytes: number,
): Promise<ChangeReport> {
  const cpuBefore = cpuSeconds(planePid);
  const since = nowMs();
  const converged = worker.ask({ type: "watch", marker, cluster: clusterOf(0), since }, "converged");
  // The worker resets its counters on `watch`; the write and the push debounce (100 ms at least)
  // leave it ample time before anything is sent.
  await write();
  const result = await converged;
  const sorted = [...result.latenciesMs].sort((a, b) => a - b);
  const bytes = sum(result.bytes);
  return {
    changes: 1,
    proxies: sorted.length,
    missing: result.missing,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    bytes,
    bytesByType: result.bytes,
    responsesByType: result.responses,
    fractionOfFullPush: bytes / fullPushBytes,
    cpuSeconds: cpuSeconds(planePid) - cpuBefore,
    latenciesMs: sorted,
  };
}

/**
 * Changes of one kind as one report: the latencies of every change together, so that one slow push
 * or one stall of the load process does not decide the figure; bytes, responses and CPU per change.
 */
export function pooledChanges(reports: readonly ChangeReport[]): ChangeReport {
  if (reports.length === 0) throw new Error("pooledChanges: no change");
  const n = reports.length;
  const sorted = reports.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
  const perChange = (pick: (r: ChangeReport) => BytesByType) => {
    const total: BytesByType = {};
    for (const r of reports) for (const [type, v] of Object.entries(pick(r))) total[type] = (total[type] ?? 0) + v / n;
    return total;
  };
  const mean = (pick: (r: ChangeReport) => number) => reports.reduce((a, r) => a + pick(r), 0) / n;
  return {
    changes: n,
    proxies: reports[0].proxies,
    missing: reports.reduce((a, r) => a + r.missing, 0),
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    bytes: mean((r) => r.bytes),
    bytesByType: perChange((r) => r.bytesByType),
    responsesByType: perChange((r) => r.responsesByType),
    fractionOfFullPush: mean((r) => r.fractionOfFullPush),
    cpuSeconds: mean((r) => r.cpuSeconds),
    latenciesMs: sorted,
  };
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

export const formatMs = (v: number) =>
  Number.isNaN(v) ? "-" : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(0)} ms`;
export const formatBytes = (bytes: number) =>
  bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} kB`;

/** A change in one line: latencies, CPU and bytes by type. */
export function describeChange(c: ChangeReport, planeName: string): string {
  const types = Object.entries(c.bytesByType)
    // Pooled changes give a mean count per change: 200 over fifteen changes summed to 200.00000000000003.
    .map(([type, b]) => `${type} ${formatBytes(b)} in ${Number((c.responsesByType[type] ?? 0).toFixed(1))}`)
    .join(", ");
  const missing = c.missing > 0 ? ` (${c.missing} never got it)` : "";
  const changes = c.changes > 1 ? `${c.changes} changes, each to ` : "";
  const each = c.changes > 1 ? "each: " : "";
  return `${changes}${c.proxies} proxies${missing}: p50 ${formatMs(c.p50Ms)} p99 ${formatMs(c.p99Ms)} max ${formatMs(c.maxMs)}; ${each}${planeName} CPU ${c.cpuSeconds.toFixed(2)} s; ${formatBytes(c.bytes)} (${(c.fractionOfFullPush * 100).toFixed(2)}% of a full push: ${types})`;
}
