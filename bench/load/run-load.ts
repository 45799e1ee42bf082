// The end-to-end load test (issue 6): for each mesh (scoped, unscoped), protocol (SotW, delta) and
// proxy count N, sluiced runs in its own process over a generated config directory and a separate
// load process (load-worker.ts) syncs N sidecar streams, then one endpoint change and one
// VirtualService change are written and timed to every proxy that can see them. The same load
// process then syncs against replay-server.ts, which sends the recorded bytes and nothing else: the
// lower bound the cold sync is reported against.
import { type ChildProcess, execFileSync, fork, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  addedEndpointIp,
  changedRoutePrefix,
  clusterOf,
  type MeshKind,
  type MeshShape,
  proxyIdentity,
  writeEndpointChange,
  writeMesh,
  writeVirtualServiceChange,
} from "./mesh.ts";
import { type BytesByType, type FromWorker, nowMs, type Protocol, type ToWorker } from "./messages.ts";

export interface LoadOptions {
  services: number;
  endpoints: number;
  proxies: number[];
  meshes: MeshKind[];
  protocols: Protocol[];
  /** Write a CPU profile of each sluiced run (node --cpu-prof) into this directory. */
  sluicedProfileDir?: string;
}

export interface ChangeReport {
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
  /** CPU sluiced used from the write until the streams went quiet. */
  sluicedCpuSeconds: number;
}

export interface LoadReport {
  mesh: MeshKind;
  protocol: Protocol;
  proxies: number;
  services: number;
  endpoints: number;
  sync: { ms: number; failed: number; bytes: number; bytesByType: BytesByType; sluicedCpuSeconds: number };
  /** The same load process syncing from the replay server. */
  bound: { ms: number; failed: number };
  /** sync.ms / bound.ms. */
  syncRatio: number;
  /** sluiced after the sync: its RSS, the V8 heap and memory outside it (prom-client's nodejs_* gauges), and the ArrayBuffers alive. */
  atRest: { rssMiB: number; heapUsedMiB: number; externalMiB: number; arrayBuffersMiB: number; cpuPercent: number };
  endpointChange: ChangeReport;
  virtualServiceChange: ChangeReport;
}

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HERE = fileURLToPath(new URL("./", import.meta.url));
const TSX = ["--import", "tsx"];
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
/**
 * Settling time before the at-rest sample, and its length. sluiced collects spent responses once it
 * has written nothing for 2 s, at most once per 10 s (xds/server/idle-gc.ts), so up to ~12 s after the
 * sync, and that collection takes seconds on the unscoped 2,000 heap: at rest is after that.
 */
const SETTLE_MS = 20_000;
const SAMPLE_MS = 3000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sum = (counts: BytesByType) => Object.values(counts).reduce((a, b) => a + b, 0);

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

function rssMiB(pid: number): number {
  const kB = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kB) / 1024;
}

/** Starts a child and waits for the JSON log line `matches` picks; rejects if it exits first. */
function startServer<T>(child: ChildProcess, matches: (line: Record<string, unknown>) => T | undefined) {
  return new Promise<T>((resolve, reject) => {
    const stdout = child.stdout;
    if (!stdout) throw new Error("child without stdout");
    const lines = createInterface({ input: stdout });
    lines.on("line", (text) => {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text);
      } catch {
        return;
      }
      const found = matches(line);
      if (found !== undefined) resolve(found);
    });
    child.once("exit", (code) => reject(new Error(`server exited (${code}) before listening`)));
  });
}

/** Where sluiced listens, and its process. */
interface Sluiced {
  grpcPort: number;
  monitoringPort: number;
  pid: number;
}

function startSluiced(dir: string, profileDir?: string): { child: ChildProcess; listening: Promise<Sluiced> } {
  const profile = profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [];
  const args = [
    ...profile,
    "bin/sluiced.js",
    "--configDir",
    dir,
    "--grpcAddr",
    "127.0.0.1:0",
    "--secureGRPCAddr",
    "",
    "--httpAddr",
    "",
    "--monitoringAddr",
    "127.0.0.1:0",
    // No webhooks: their default :15017 would clash with any other sluiced on the machine.
    "--httpsAddr",
    "",
  ];
  // As the README and the install manifests run sluiced: glibc's malloc thresholds fixed (see README).
  const env = { ...process.env, MALLOC_MMAP_THRESHOLD_: "131072", MALLOC_TRIM_THRESHOLD_: "131072" };
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "inherit"] });
  let monitoringPort = 0;
  // pino writes the pid of the process that logs.
  const listening = startServer(child, (line) => {
    if (line.msg === "admin HTTP server listening" && typeof line.monitoringPort === "number") {
      monitoringPort = line.monitoringPort;
    }
    if (line.msg !== "xDS server listening" || typeof line.grpcPort !== "number" || typeof line.pid !== "number") {
      return undefined;
    }
    return { grpcPort: line.grpcPort, monitoringPort, pid: line.pid };
  });
  return { child, listening };
}

/** A gauge of sluiced's /metrics in MiB (prom-client's default process and nodejs metrics). */
async function gaugesMiB(monitoringPort: number, names: readonly string[]): Promise<number[]> {
  const text = await (await fetch(`http://127.0.0.1:${monitoringPort}/metrics`)).text();
  return names.map((name) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]) / 1024 / 1024);
}

function startReplay(recording: string): { child: ChildProcess; port: Promise<number> } {
  const child = fork(join(HERE, "replay-server.ts"), [recording], {
    execArgv: TSX,
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const port = startServer(child, (line) =>
    line.msg === "replay server listening" && typeof line.port === "number" ? line.port : undefined,
  );
  return { child, port };
}

/** The load process, and a way to ask it something and wait for its answer. */
class Worker {
  readonly #child = fork(join(HERE, "load-worker.ts"), [], { execArgv: TSX });
  readonly #replies: ((m: FromWorker) => void)[] = [];

  constructor() {
    this.#child.on("message", (m: FromWorker) => this.#replies.shift()?.(m));
  }

  ask<T extends FromWorker["type"]>(message: ToWorker, reply: T): Promise<Extract<FromWorker, { type: T }>> {
    return new Promise((resolve, reject) => {
      this.#child.once("exit", (code) => reject(new Error(`load worker exited (${code})`)));
      this.#replies.push((m) => (m.type === reply ? resolve(m as Extract<FromWorker, { type: T }>) : reject(m)));
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

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function change(
  worker: Worker,
  sluicedPid: number,
  marker: string,
  write: () => void,
  fullPushBytes: number,
): Promise<ChangeReport> {
  const cpuBefore = cpuSeconds(sluicedPid);
  const since = nowMs();
  const converged = worker.ask({ type: "watch", marker, cluster: clusterOf(0), since }, "converged");
  // The worker resets its counters on `watch`; the file source and the push debounce (200 ms at
  // least) leave it ample time before anything is sent.
  write();
  const result = await converged;
  const sorted = [...result.latenciesMs].sort((a, b) => a - b);
  const bytes = sum(result.bytes);
  return {
    proxies: sorted.length,
    missing: result.missing,
    p50Ms: quantile(sorted, 0.5),
    p99Ms: quantile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    bytes,
    bytesByType: result.bytes,
    responsesByType: result.responses,
    fractionOfFullPush: bytes / fullPushBytes,
    sluicedCpuSeconds: cpuSeconds(sluicedPid) - cpuBefore,
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

async function runOne(shape: MeshShape, protocol: Protocol, n: number, profileDir?: string): Promise<LoadReport> {
  const dir = mkdtempSync(join(tmpdir(), "sluice-load-"));
  const recording = join(dir, "recording.json");
  const configDir = join(dir, "config");
  writeMesh(configDir, shape);
  const proxies = Array.from({ length: n }, (_, i) => proxyIdentity(shape, i));
  const sluiced = startSluiced(configDir, profileDir);
  try {
    const { grpcPort: port, monitoringPort, pid } = await sluiced.listening;
    const worker = new Worker();
    const cpuBefore = cpuSeconds(pid);
    const synced = await worker.ask(
      { type: "connect", address: `127.0.0.1:${port}`, protocol, proxies, recordTo: recording },
      "synced",
    );
    const sluicedCpuSeconds = cpuSeconds(pid) - cpuBefore;
    await sleep(SETTLE_MS);
    const restStart = cpuSeconds(pid);
    await sleep(SAMPLE_MS);
    const cpuPercent = ((cpuSeconds(pid) - restStart) / (SAMPLE_MS / 1000)) * 100;
    const [heapUsedMiB, externalMiB, arrayBuffersMiB] = await gaugesMiB(monitoringPort, [
      "nodejs_heap_size_used_bytes",
      "nodejs_external_memory_bytes",
      "sluiced_array_buffers_bytes",
    ]);
    const atRest = { rssMiB: rssMiB(pid), heapUsedMiB, externalMiB, arrayBuffersMiB, cpuPercent };
    const fullBytes = sum(synced.bytes);
    const endpointChange = await change(
      worker,
      pid,
      addedEndpointIp(1),
      () => writeEndpointChange(configDir, shape, 1),
      fullBytes,
    );
    const virtualServiceChange = await change(
      worker,
      pid,
      changedRoutePrefix(1),
      () => writeVirtualServiceChange(configDir, 1),
      fullBytes,
    );
    await worker.close();
    await stop(sluiced.child);

    const replay = startReplay(recording);
    const boundWorker = new Worker();
    const bound = await boundWorker.ask(
      { type: "connect", address: `127.0.0.1:${await replay.port}`, protocol, proxies },
      "synced",
    );
    await boundWorker.close();
    await stop(replay.child);
    return {
      mesh: shape.kind,
      protocol,
      proxies: n,
      services: shape.services,
      endpoints: shape.endpoints,
      sync: { ms: synced.ms, failed: synced.failed, bytes: fullBytes, bytesByType: synced.bytes, sluicedCpuSeconds },
      bound: { ms: bound.ms, failed: bound.failed },
      syncRatio: synced.ms / bound.ms,
      atRest,
      endpointChange,
      virtualServiceChange,
    };
  } finally {
    await stop(sluiced.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every run of the load test, each reported as soon as it is done (a full-size run takes long). */
export async function* runLoad(options: LoadOptions): AsyncGenerator<LoadReport> {
  for (const kind of options.meshes) {
    for (const protocol of options.protocols) {
      for (const n of options.proxies) {
        const shape = { kind, services: options.services, endpoints: options.endpoints };
        yield await runOne(shape, protocol, n, options.sluicedProfileDir);
      }
    }
  }
}

const ms = (v: number) => (Number.isNaN(v) ? "-" : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(0)} ms`);
const mb = (bytes: number) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} kB`);

function describeChange(c: ChangeReport): string {
  const types = Object.entries(c.bytesByType)
    .map(([type, b]) => `${type} ${mb(b)} in ${c.responsesByType[type] ?? 0}`)
    .join(", ");
  const missing = c.missing > 0 ? ` (${c.missing} never got it)` : "";
  return `${c.proxies} proxies${missing}: p50 ${ms(c.p50Ms)} p99 ${ms(c.p99Ms)} max ${ms(c.maxMs)}; sluiced CPU ${c.sluicedCpuSeconds.toFixed(2)} s; ${mb(c.bytes)} (${(c.fractionOfFullPush * 100).toFixed(2)}% of a full push: ${types})`;
}

export function printLoadReport(r: LoadReport): void {
  const head = `load: ${r.mesh}, ${r.protocol}, ${r.proxies} proxies, ${r.services} services x ${r.endpoints} endpoints`;
  const failed = r.sync.failed > 0 ? ` (${r.sync.failed} FAILED)` : "";
  console.log(head);
  console.log(
    `  cold sync ${ms(r.sync.ms)}${failed}, lower bound ${ms(r.bound.ms)} (${r.syncRatio.toFixed(2)}x); ${mb(r.sync.bytes)} sent; sluiced CPU ${r.sync.sluicedCpuSeconds.toFixed(2)} s`,
  );
  const rest = r.atRest;
  console.log(
    `  at rest: sluiced RSS ${rest.rssMiB.toFixed(0)} MiB (V8 heap used ${rest.heapUsedMiB.toFixed(0)} MiB, external ${rest.externalMiB.toFixed(0)} MiB, of which ArrayBuffers alive ${rest.arrayBuffersMiB.toFixed(0)} MiB), CPU ${rest.cpuPercent.toFixed(1)}%`,
  );
  console.log(`  endpoint change: ${describeChange(r.endpointChange)}`);
  console.log(`  VirtualService change: ${describeChange(r.virtualServiceChange)}`);
}

/** One row per run: the figures issue 6 sets targets for. */
export function printLoadTable(reports: readonly LoadReport[]): void {
  const pct = (c: ChangeReport) => `${(c.fractionOfFullPush * 100).toFixed(2)}%`;
  const latency = (c: ChangeReport) => `${ms(c.p50Ms)}/${ms(c.p99Ms)}/${ms(c.maxMs)}`;
  const rows = [
    [
      "mesh",
      "proto",
      "N",
      "sync",
      "bound",
      "ratio",
      "RSS MiB",
      "rest CPU",
      "endpoint p50/p99/max",
      "endpoint bytes",
      "VS p50/p99/max",
      "VS bytes",
    ],
    ...reports.map((r) => [
      r.mesh,
      r.protocol,
      String(r.proxies),
      ms(r.sync.ms),
      ms(r.bound.ms),
      `${r.syncRatio.toFixed(2)}x`,
      r.atRest.rssMiB.toFixed(0),
      `${r.atRest.cpuPercent.toFixed(1)}%`,
      latency(r.endpointChange),
      pct(r.endpointChange),
      latency(r.virtualServiceChange),
      pct(r.virtualServiceChange),
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join("  "));
}
