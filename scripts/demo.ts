// `npm run demo`: proxyless gRPC traffic splitting, end to end, on 127.0.0.1. It copies
// examples/proxyless/ to a temporary directory, starts sluiced on the copy, two versions of the echo
// server and a client (each with the bootstrap `sluice-agent grpc-bootstrap` writes), shows the
// VirtualService's 90/10 split, then rewrites the copy's VirtualService to 50/50 and shows the running
// client follow it. Exits 0 when both splits were observed; otherwise prints why and the programs' logs.
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseAllDocuments, parseDocument } from "yaml";
import { freePort } from "../test/support/free-port.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const EXAMPLE = join(ROOT, "examples", "proxyless");
const TSX = ["--import", "tsx"];
const VERSIONS = ["v1", "v2"] as const;
type Version = (typeof VERSIONS)[number];

/** Calls per measured split. */
const CALLS = 1000;
/** Calls per probe while waiting for the new split: 25 of 100 on v2 is out of reach of a 90/10 split. */
const PROBE_CALLS = 100;
const PROBE_V2_AT_LEAST = 25;
/** How far v2's share may be from its weight: over 1,000 calls that is 6.3 standard deviations at 10 %, 3.8 at 50 %. */
const TOLERANCE_POINTS = 6;
const STARTUP_TIMEOUT_MS = 60_000;
const CHANGE_TIMEOUT_MS = 30_000;

class DemoFailure extends Error {}

/** A program the demo started, with the last lines it printed (shown when something fails). */
interface Program {
  name: string;
  child: ChildProcess;
  lines: Interface;
  output: string[];
}

const programs: Program[] = [];
let workDir: string | undefined;

function say(text = ""): void {
  process.stdout.write(`${text}\n`);
}

/** Starts a program; its stdout and stderr are kept (last 40 lines), not shown. */
function start(name: string, args: string[], env: NodeJS.ProcessEnv = {}): Program {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const output: string[] = [];
  const keep = (line: string) => {
    output.push(line);
    if (output.length > 40) output.shift();
  };
  const lines = createInterface({ input: child.stdout! });
  lines.on("line", keep);
  createInterface({ input: child.stderr! }).on("line", keep);
  const program = { name, child, lines, output };
  programs.push(program);
  return program;
}

/** The first line of `program` that `match` accepts; fails if it exits or stays silent too long. */
function firstLine<T>(program: Program, what: string, match: (line: string) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => settle(new DemoFailure(`${program.name} did not ${what} in time`)),
      STARTUP_TIMEOUT_MS,
    );
    const onLine = (line: string) => {
      const found = match(line);
      if (found !== undefined) settle(undefined, found);
    };
    const onExit = (code: number | null) =>
      settle(new DemoFailure(`${program.name} exited (${code}) before it could ${what}`));
    const settle = (err?: Error, value?: T) => {
      clearTimeout(timer);
      program.lines.off("line", onLine);
      program.child.off("exit", onExit);
      if (err) reject(err);
      else resolve(value as T);
    };
    program.lines.on("line", onLine);
    program.child.once("exit", onExit);
  });
}

/** Starts sluiced on the config directory and waits for the port its xDS server listens on. */
async function startSluiced(configDir: string): Promise<number> {
  const sluiced = start("sluiced", [
    "bin/sluiced.js",
    "--configDir",
    configDir,
    "--meshConfig",
    join(workDir!, "meshconfig.yaml"),
    "--grpcAddr",
    "127.0.0.1:0",
    "--secureGRPCAddr",
    "",
    "--monitoringAddr",
    "",
    "--httpAddr",
    "",
    "--httpsAddr",
    "",
    "--debounceAfter",
    "50ms",
  ]);
  return firstLine(sluiced, "start its xDS server", (text) => {
    const line = parseJsonLine(text);
    return line?.msg === "xDS server listening" && typeof line.grpcPort === "number" ? line.grpcPort : undefined;
  });
}

function parseJsonLine(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes a workload's gRPC bootstrap with `sluice-agent grpc-bootstrap`, from the environment a pod
 * would give it (name, namespace, IP, labels), as Istio's grpc-agent template does.
 */
async function writeBootstrap(name: string, labels: Record<string, string>, sluicedPort: number): Promise<string> {
  const file = join(workDir!, `${name}-bootstrap.json`);
  const args = ["bin/sluice-agent.js", "grpc-bootstrap", "--meshConfig", join(workDir!, "meshconfig.yaml")];
  args.push("--discovery-address", `127.0.0.1:${sluicedPort}`, "--pod-info-dir", join(workDir!, "no-pod-info"));
  args.push("--output", file);
  const agent = start(`sluice-agent for ${name}`, args, {
    POD_NAME: name,
    POD_NAMESPACE: "default",
    INSTANCE_IP: "127.0.0.1",
    ISTIO_METAJSON_LABELS: JSON.stringify(labels),
  });
  // It prints the file's path once written.
  await firstLine(agent, "write the bootstrap", (line) => (line === file ? true : undefined));
  return file;
}

/** Gives each WorkloadEntry of the copied service file the port its echo server will listen on. */
function assignPorts(serviceFile: string, ports: Record<Version, number>): void {
  const documents = parseAllDocuments(readFileSync(serviceFile, "utf8"));
  for (const doc of documents) {
    if (doc.get("kind") !== "WorkloadEntry") continue;
    const version = doc.getIn(["spec", "labels", "version"]) as Version;
    doc.setIn(["spec", "ports", "grpc"], ports[version]);
  }
  writeFileSync(serviceFile, documents.map((doc) => doc.toString()).join("---\n"));
}

/** Sets the weights of the VirtualService's two destinations (v1 first, as in the example). */
function setWeights(virtualServiceFile: string, v1: number, v2: number): void {
  const doc = parseDocument(readFileSync(virtualServiceFile, "utf8"));
  doc.setIn(["spec", "http", 0, "route", 0, "weight"], v1);
  doc.setIn(["spec", "http", 0, "route", 1, "weight"], v2);
  writeFileSync(virtualServiceFile, doc.toString());
}

type Tally = Record<string, number>;

/** Asks the running client for `n` calls and returns how many each version answered. */
async function calls(client: Program, n: number): Promise<Tally> {
  const answer = firstLine(client, "answer", (text) => parseJsonLine(text) as Tally | undefined);
  client.child.stdin!.write(`${n}\n`);
  return answer;
}

const count = (tally: Tally, key: string) => tally[key] ?? 0;
const failures = (tally: Tally) =>
  Object.entries(tally)
    .filter(([key]) => key.startsWith("error:"))
    .map(([key, n]) => `${n} × ${key.slice("error:".length)}`);
const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`;

/** Makes CALLS calls, prints where they went, and checks the share of v2 is about `expectedV2` %. */
async function observeSplit(client: Program, expectedV2: number): Promise<number> {
  say(`  Making ${CALLS} calls to the echo service...`);
  const tally = await calls(client, CALLS);
  const v1 = count(tally, "v1");
  const v2 = count(tally, "v2");
  say(`  Observed: v1 answered ${v1} calls (${percent(v1, CALLS)}), v2 answered ${v2} (${percent(v2, CALLS)}).`);
  const failed = failures(tally);
  if (failed.length > 0) throw new DemoFailure(`some calls failed: ${failed.join(", ")}`);
  const share = (100 * v2) / CALLS;
  if (Math.abs(share - expectedV2) > TOLERANCE_POINTS)
    throw new DemoFailure(`v2 got ${share.toFixed(1)}% of the calls; the VirtualService asks for ${expectedV2}%`);
  say(`  That is the ${100 - expectedV2}/${expectedV2} split the VirtualService asks for.`);
  return share;
}

/** Sends probes until one shows the new split; the time it took from the file write. */
async function waitForNewSplit(client: Program, writtenAt: number): Promise<number> {
  for (;;) {
    const tally = await calls(client, PROBE_CALLS);
    const elapsed = performance.now() - writtenAt;
    if (count(tally, "v2") >= PROBE_V2_AT_LEAST && failures(tally).length === 0) return elapsed;
    if (elapsed > CHANGE_TIMEOUT_MS)
      throw new DemoFailure(`the client still follows the old split ${CHANGE_TIMEOUT_MS / 1000} s after the edit`);
  }
}

async function demo(): Promise<void> {
  say("Sluice demo: proxyless gRPC traffic splitting");
  say();
  workDir = mkdtempSync(join(tmpdir(), "sluice-demo-"));
  cpSync(EXAMPLE, workDir, { recursive: true });
  const configDir = join(workDir, "config");

  const ports = { v1: await freePort(), v2: await freePort() };
  assignPorts(join(configDir, "service.yaml"), ports);

  const sluicedPort = await startSluiced(configDir);
  say("Started, all on this machine (127.0.0.1):");
  say(`  - sluiced, the control plane, serving xDS on port ${sluicedPort}. It watches the YAML files`);
  say(`    of a copy of examples/proxyless/config in ${configDir}`);
  say("    (a ServiceEntry for echo.default.svc.cluster.local with the two versions as its workloads,");
  say("    a DestinationRule naming the versions v1 and v2, and a VirtualService splitting calls between them).");

  // Each workload's agent writes its bootstrap, as Istio's grpc-agent template does before the app starts.
  const [v1Bootstrap, v2Bootstrap, clientBootstrap] = await Promise.all([
    writeBootstrap("echo-v1", { app: "echo", version: "v1" }, sluicedPort),
    writeBootstrap("echo-v2", { app: "echo", version: "v2" }, sluicedPort),
    writeBootstrap("echo-client", { app: "echo-client" }, sluicedPort),
  ]);
  const bootstraps = { v1: v1Bootstrap, v2: v2Bootstrap };
  const servers = VERSIONS.map((version) => {
    const args = [...TSX, join(EXAMPLE, "echo-server.ts"), "--port", String(ports[version]), "--version", version];
    return start(`echo ${version}`, args, { GRPC_XDS_BOOTSTRAP: bootstraps[version] });
  });
  const client = start("client", [...TSX, join(EXAMPLE, "echo-client.ts")], { GRPC_XDS_BOOTSTRAP: clientBootstrap });
  await Promise.all(
    servers.map((server) =>
      firstLine(server, "start serving", (line) => (line.includes(" serving on ") ? true : undefined)),
    ),
  );
  say(`  - echo v1 and echo v2, two versions of a small gRPC service, on ports ${ports.v1} and ${ports.v2}.`);
  say("    Each answers every call with its version. They are xDS-enabled gRPC servers: each started");
  say("    serving once sluiced sent it the inbound listener for its port.");
  say("  - a client calling echo.default.svc.cluster.local:7070. There is no proxy in between: its gRPC");
  say("    library asks sluiced (over xDS) where each call should go.");
  say("  Each program found sluiced through the bootstrap file `sluice-agent grpc-bootstrap` wrote for it");
  say(`  (in ${workDir}).`);
  say();

  say("Step 1. The VirtualService sends 90% of the calls to v1 and 10% to v2.");
  const before = await observeSplit(client, 10);
  say();

  say("Step 2. Changing the VirtualService file to send 50% to each version. Nothing is restarted:");
  say("  sluiced notices the file change and pushes the new routes to the running client.");
  const writtenAt = performance.now();
  setWeights(join(configDir, "virtual-service.yaml"), 50, 50);
  const tookMs = await waitForNewSplit(client, writtenAt);
  say(`  The client followed the new rule ${(tookMs / 1000).toFixed(1)} s after the file was saved.`);
  const after = await observeSplit(client, 50);
  say();
  say(
    `Result: v2's share went from ${before.toFixed(1)}% to ${after.toFixed(1)}% by editing one file, with no restart.`,
  );
}

/** Stops every program the demo started and removes the temporary copy. */
async function cleanUp(): Promise<void> {
  await Promise.all(
    programs.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
          // A program that ignores SIGTERM is not waited for.
          setTimeout(() => {
            child.kill("SIGKILL");
            resolve();
          }, 5_000).unref();
        }),
    ),
  );
  if (workDir) rmSync(workDir, { recursive: true, force: true });
}

function showLogs(): void {
  for (const { name, output } of programs) {
    if (output.length === 0) continue;
    process.stderr.write(`\n--- last lines of ${name} ---\n${output.join("\n")}\n`);
  }
}

/** Set on Ctrl-C: the demo's own failures (its programs stopping under it) are then not reported. */
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    interrupted = true;
    say("\nInterrupted: stopping everything the demo started.");
    await cleanUp();
    process.exit(130);
  });
}

try {
  await demo();
  say("Stopping everything the demo started.");
  await cleanUp();
  process.exit(0);
} catch (err) {
  // After Ctrl-C the programs stop under the demo; the signal handler cleans up and exits.
  if (!interrupted) {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`\nThe demo failed: ${message}\n`);
    if (!(err instanceof DemoFailure) && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    showLogs();
    await cleanUp();
    process.exit(1);
  }
}
