// The end-to-end load test (issue 6): for each mesh (scoped, unscoped), protocol (SotW, delta) and
// proxy count N, sluiced runs in its own process over a generated config directory and a separate
// load process (load-worker.ts) syncs N sidecar streams, then one endpoint change and one
// VirtualService change are written and timed to every proxy that can see them. The same load
// process then syncs against replay-server.ts, which sends the recorded bytes and nothing else: the
// lower bound the cold sync is reported against.
import { type ChildProcess, fork, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { SLUICED, sluicedLaunch } from "../../test/sluiced-launch.ts";
import {
  type ChangeReport,
  cpuPercentOver,
  cpuSeconds,
  describeChange,
  formatBytes,
  formatMs,
  rssMiB,
  sleep,
  sluicedMemory,
  stopChild,
  sum,
  TSX,
  timeChange,
  Worker,
} from "./measure-plane.ts";
import {
  addedEndpointIp,
  changedRoutePrefix,
  type MeshKind,
  type MeshShape,
  proxyIdentity,
  writeEndpointChange,
  writeMesh,
  writeVirtualServiceChange,
} from "./mesh.ts";
import type { BytesByType, Protocol } from "./messages.ts";

export interface LoadOptions {
  services: number;
  endpoints: number;
  proxies: number[];
  meshes: MeshKind[];
  protocols: Protocol[];
  /** Write a CPU profile of each sluiced run (node --cpu-prof) into this directory. */
  sluicedProfileDir?: string;
  /** Endpoint changes timed in each run against istiod (default 5). */
  endpointChanges?: number;
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
/**
 * Settling time before the at-rest sample, and its length. sluiced collects spent responses once it
 * has written nothing for 2 s, at most once per 10 s (xds/server/idle-gc.ts), so up to ~12 s after the
 * sync, and that collection takes seconds on the unscoped 2,000 heap: at rest is after that.
 */
const SETTLE_MS = 20_000;
const SAMPLE_MS = 3000;

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
  const launch = sluicedLaunch();
  const args = [
    ...launch.nodeArgs,
    ...profile,
    SLUICED,
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
  const env = { ...process.env, ...launch.env };
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
    const cpuPercent = await cpuPercentOver(pid, SAMPLE_MS);
    const atRest = { rssMiB: rssMiB(pid), ...(await sluicedMemory(`127.0.0.1:${monitoringPort}`)), cpuPercent };
    const fullBytes = sum(synced.bytes);
    const endpointChange = await timeChange(
      worker,
      pid,
      addedEndpointIp(1),
      () => writeEndpointChange(configDir, shape, 1),
      fullBytes,
    );
    const virtualServiceChange = await timeChange(
      worker,
      pid,
      changedRoutePrefix(1),
      () => writeVirtualServiceChange(configDir, 1),
      fullBytes,
    );
    await worker.close();
    await stopChild(sluiced.child);

    const replay = startReplay(recording);
    const boundWorker = new Worker();
    const bound = await boundWorker.ask(
      { type: "connect", address: `127.0.0.1:${await replay.port}`, protocol, proxies },
      "synced",
    );
    await boundWorker.close();
    await stopChild(replay.child);
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
    await stopChild(sluiced.child);
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

export function printLoadReport(r: LoadReport): void {
  const head = `load: ${r.mesh}, ${r.protocol}, ${r.proxies} proxies, ${r.services} services x ${r.endpoints} endpoints`;
  const failed = r.sync.failed > 0 ? ` (${r.sync.failed} FAILED)` : "";
  console.log(head);
  console.log(
    `  cold sync ${formatMs(r.sync.ms)}${failed}, lower bound ${formatMs(r.bound.ms)} (${r.syncRatio.toFixed(2)}x); ${formatBytes(r.sync.bytes)} sent; sluiced CPU ${r.sync.sluicedCpuSeconds.toFixed(2)} s`,
  );
  const rest = r.atRest;
  console.log(
    `  at rest: sluiced RSS ${rest.rssMiB.toFixed(0)} MiB (V8 heap used ${rest.heapUsedMiB.toFixed(0)} MiB, external ${rest.externalMiB.toFixed(0)} MiB, of which ArrayBuffers alive ${rest.arrayBuffersMiB.toFixed(0)} MiB), CPU ${rest.cpuPercent.toFixed(1)}%`,
  );
  console.log(`  endpoint change: ${describeChange(r.endpointChange, "sluiced")}`);
  console.log(`  VirtualService change: ${describeChange(r.virtualServiceChange, "sluiced")}`);
}

/** One row per run: the figures issue 6 sets targets for. */
export function printLoadTable(reports: readonly LoadReport[]): void {
  const pct = (c: ChangeReport) => `${(c.fractionOfFullPush * 100).toFixed(2)}%`;
  const latency = (c: ChangeReport) => `${formatMs(c.p50Ms)}/${formatMs(c.p99Ms)}/${formatMs(c.maxMs)}`;
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
      formatMs(r.sync.ms),
      formatMs(r.bound.ms),
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
