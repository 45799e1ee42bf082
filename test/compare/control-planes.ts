// The control planes a comparison runs side by side against one cluster: istiod (the peer build, as a
// standard install runs it: namespace istio-system, revision default, cluster Kubernetes), sluiced with
// its defaults, and a second sluiced with its XDS cache off (PILOT_ENABLE_XDS_CACHE=false), which must
// serve the same bytes as the first. All read the same MeshConfig file and serve plaintext xDS on loopback.
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { requirePeer } from "../peers/paths.ts";
import { SLUICED, sluicedLaunch } from "../sluiced-launch.ts";

export interface ControlPlane {
  name: "istiod" | "sluice" | "sluice (cache off)";
  /** Plaintext xDS, host:port. */
  xds: string;
  /** Where /debug/* is served (istiod's 8080, sluiced's --httpAddr). */
  debug: string;
  /** Where /metrics is served (15014). */
  monitoring: string;
  stop(): Promise<void>;
}

/** A free loopback port (istiod prints no port it was given as 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The last lines of a log, for an error that outlives the work folder. */
const logTail = (log: string) => readFileSync(log, "utf8").split("\n").slice(-30).join("\n");

async function waitReady(name: string, child: ChildProcess, url: string, log: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${logTail(log)}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${name} not ready within 90 s (${url}):\n${logTail(log)}`);
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
}

function spawnLogged(bin: string, args: string[], env: NodeJS.ProcessEnv, log: string, argv0?: string): ChildProcess {
  const out = createWriteStream(log);
  const child = spawn(bin, args, { env, stdio: ["ignore", "pipe", "pipe"], ...(argv0 ? { argv0 } : {}) });
  // Both into one file, closed once both have ended ("close"): piped with their default end, the
  // first to end would close it under the other's last lines (a write after end, thrown).
  child.stdout?.pipe(out, { end: false });
  child.stderr?.pipe(out, { end: false });
  child.once("close", () => out.end());
  return child;
}

/** A control plane being started: what it will serve, and a wait for its /ready. */
export interface StartingPlane {
  plane: ControlPlane;
  /** The process serving xDS (for its CPU time and memory in /proc). */
  pid: number;
  ready(): Promise<void>;
}

/** Where a control plane reads the cluster and its MeshConfig, and keeps its log. */
export interface PlaneInputs {
  kubeconfig: string;
  meshFile: string;
  workDir: string;
}

/** istiod's command in Istio's image (/usr/local/bin/pilot-discovery); the peer build is named istiod. */
export const ISTIOD_COMMAND = "pilot-discovery";

/** As a standard install runs istiod: in istio-system, revision default. */
const ISTIOD_POD_ENV = { POD_NAMESPACE: "istio-system", POD_NAME: "istiod-compare", REVISION: "default" };

/** istiod (the peer build) with its default settings (but for `env`), on loopback ports. */
export async function startIstiod(
  { kubeconfig, meshFile, workDir }: PlaneInputs,
  env: NodeJS.ProcessEnv = {},
): Promise<StartingPlane> {
  const noNetworks = join(workDir, "no-networks.yaml");
  writeFileSync(noNetworks, "");
  const [grpc, secure, http, https, monitoring] = await Promise.all([1, 2, 3, 4, 5].map(freePort));
  const log = join(workDir, "istiod.log");
  const child = spawnLogged(
    requirePeer("istiod"),
    [
      "discovery",
      ...["--kubeconfig", kubeconfig, "--meshConfig", meshFile, "--networksConfig", noNetworks],
      ...["--grpcAddr", `127.0.0.1:${grpc}`, "--secureGRPCAddr", `127.0.0.1:${secure}`],
      ...["--httpAddr", `127.0.0.1:${http}`, "--httpsAddr", `127.0.0.1:${https}`],
      ...["--monitoringAddr", `127.0.0.1:${monitoring}`, "--ctrlz_port", "0"],
    ],
    { ...process.env, ...ISTIOD_POD_ENV, ...env },
    log,
    // As Istio's image runs it: its user agent, so the field manager of its writes, is the command's name.
    ISTIOD_COMMAND,
  );
  const plane: ControlPlane = {
    name: "istiod",
    xds: `127.0.0.1:${grpc}`,
    debug: `127.0.0.1:${http}`,
    monitoring: `127.0.0.1:${monitoring}`,
    stop: stopper(child),
  };
  return { plane, pid: pidOf(child), ready: () => waitReady("istiod", child, `http://${plane.debug}/ready`, log) };
}

/** How a sluiced is run beyond its defaults. */
export interface SluicedOptions {
  name?: Exclude<ControlPlane["name"], "istiod">;
  env?: NodeJS.ProcessEnv;
  /** Arguments to node itself (e.g. --cpu-prof). */
  nodeArgs?: string[];
}

/** sluiced with its defaults, as bin/sluiced.js runs it, plaintext xDS on loopback, no webhooks. */
export async function startSluiced(
  { kubeconfig, meshFile, workDir }: PlaneInputs,
  { name = "sluice", env = {}, nodeArgs = [] }: SluicedOptions = {},
): Promise<StartingPlane> {
  const [grpc, http, monitoring] = await Promise.all([1, 2, 3].map(freePort));
  const log = join(workDir, name === "sluice" ? "sluiced.log" : "sluiced-cache-off.log");
  const launch = sluicedLaunch();
  const child = spawnLogged(
    process.execPath,
    [
      ...launch.nodeArgs,
      ...nodeArgs,
      SLUICED,
      ...["--kubeconfig", kubeconfig, "--meshConfig", meshFile],
      ...["--grpcAddr", `127.0.0.1:${grpc}`, "--secureGRPCAddr", "", "--httpsAddr", ""],
      ...["--httpAddr", `127.0.0.1:${http}`, "--monitoringAddr", `127.0.0.1:${monitoring}`],
    ],
    { ...process.env, ...ISTIOD_POD_ENV, ...launch.env, ...env },
    log,
  );
  const plane: ControlPlane = {
    name,
    xds: `127.0.0.1:${grpc}`,
    debug: `127.0.0.1:${http}`,
    monitoring: `127.0.0.1:${monitoring}`,
    stop: stopper(child),
  };
  return { plane, pid: pidOf(child), ready: () => waitReady(name, child, `http://${plane.debug}/ready`, log) };
}

function pidOf(child: ChildProcess): number {
  if (child.pid === undefined) throw new Error("the control plane did not start");
  return child.pid;
}

/**
 * Starts istiod, sluiced, and sluiced with its XDS cache off against the cluster of `kubeconfig`, all
 * with `meshConfig` (YAML, may be empty) and the environment `env` (features such as PILOT_ENABLE_AMBIENT).
 */
export async function startControlPlanes(
  kubeconfig: string,
  meshConfig: string,
  workDir: string,
  env: Readonly<Record<string, string>> = {},
): Promise<[ControlPlane, ControlPlane, ControlPlane]> {
  // Each pair (one per MeshConfig) in a folder of its own, so that its logs stay.
  workDir = mkdtempSync(join(workDir, "planes-"));
  const meshFile = join(workDir, "mesh.yaml");
  writeFileSync(meshFile, meshConfig);
  const inputs = { kubeconfig, meshFile, workDir };
  const started = [
    await startIstiod(inputs, env),
    await startSluiced(inputs, { env }),
    await startSluiced(inputs, { name: "sluice (cache off)", env: { ...env, PILOT_ENABLE_XDS_CACHE: "false" } }),
  ];
  const planes = started.map((s) => s.plane) as [ControlPlane, ControlPlane, ControlPlane];
  try {
    await Promise.all(started.map((s) => s.ready()));
  } catch (err) {
    await Promise.all(planes.map((p) => p.stop()));
    throw err;
  }
  return planes;
}

interface ConfigzEntry {
  kind: string;
  metadata: { name: string; namespace?: string };
}

/** Waits until the control plane's /debug/configz holds exactly `present` of `all` (the scenario's configs). */
export async function waitForConfigs(
  plane: ControlPlane,
  present: readonly { kind: string; namespace?: string; name: string }[],
  absent: readonly { kind: string; namespace?: string; name: string }[],
  timeoutMs = 60_000,
): Promise<void> {
  const key = (c: { kind: string; namespace?: string; name: string }) => `${c.kind}/${c.namespace ?? ""}/${c.name}`;
  const deadline = Date.now() + timeoutMs;
  let missing: string[] = [];
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://${plane.debug}/debug/configz`);
      const held = new Set(((await res.json()) as ConfigzEntry[]).map((c) => key({ kind: c.kind, ...c.metadata })));
      missing = [
        ...present.filter((c) => !held.has(key(c))).map(key),
        ...absent.filter((c) => held.has(key(c))).map((c) => `-${key(c)}`),
      ];
      if (missing.length === 0) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `${plane.name} did not catch up with the cluster within ${timeoutMs} ms: ${missing.slice(0, 5).join(", ")}`,
  );
}
