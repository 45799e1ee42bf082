// Start-up of the compiled programs as users run them (`npm run build` first): `sluice version
// --short` and `sluice --help` until they exit, and sluiced on examples/mesh until /ready answers 200.
// Each is a fresh process; the median and p99 of `runs` starts are reported, beside node's own start
// (`node -e 0`) as the floor. NODE_EXTRA_CA_CERTS makes node read a CA bundle before any script runs;
// where the environment sets it, the CLI is measured both with it and without it.
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { SLUICED, sluicedLaunch } from "../test/sluiced-launch.ts";
import { timing } from "./measure.ts";
import type { BenchResult } from "./run.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SLUICE = fileURLToPath(new URL("../bin/sluice.js", import.meta.url));

/** Microseconds from spawning node with `args` to its exit. */
function timeNode(args: string[], env: NodeJS.ProcessEnv): number {
  const start = performance.now();
  const run = spawnSync(process.execPath, args, { cwd: ROOT, stdio: "ignore", env });
  if (run.status !== 0) throw new Error(`node ${args.join(" ")} exited ${run.status}`);
  return (performance.now() - start) * 1000;
}

/** Microseconds from spawning sluiced on examples/mesh to its first 200 from /ready. */
async function timeSluicedReady(): Promise<number> {
  const start = performance.now();
  const args = ["--configDir", "examples/mesh", "--meshConfig", "examples/meshconfig.yaml"];
  const listen = ["--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "", "--httpAddr", "127.0.0.1:0"];
  const launch = sluicedLaunch();
  const command = [...launch.nodeArgs, SLUICED, ...args, ...listen, "--monitoringAddr", "", "--httpsAddr", ""];
  const child = spawn(process.execPath, command, {
    cwd: ROOT,
    env: { ...process.env, ...launch.env },
    stdio: ["ignore", "pipe", "ignore"],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let buffered = "";
      child.stdout.on("data", (chunk: Buffer) => {
        buffered += chunk.toString();
        const match = /"httpPort":(\d+)/.exec(buffered);
        if (match) resolve(Number(match[1]));
      });
      child.once("exit", (code) => reject(new Error(`sluiced exited (${code}) before listening`)));
    });
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${port}/ready`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) return (performance.now() - start) * 1000;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

export async function benchStartup(runs: number): Promise<BenchResult[]> {
  const samples = (fn: () => number) => Array.from({ length: runs }, fn);
  const ready: number[] = [];
  for (let i = 0; i < runs; i++) ready.push(await timeSluicedReady());
  const environments: { label: string; env: NodeJS.ProcessEnv }[] = [{ label: "", env: process.env }];
  if (process.env.NODE_EXTRA_CA_CERTS) {
    const { NODE_EXTRA_CA_CERTS: _, ...env } = process.env;
    environments.push({ label: ", NODE_EXTRA_CA_CERTS unset", env });
  }
  const cli = environments.flatMap(({ label, env }) => [
    { name: `start-up: node -e 0, the floor${label}`, ...timing(samples(() => timeNode(["-e", "0"], env))) },
    {
      name: `start-up: sluice version --short (process start to exit)${label}`,
      ...timing(samples(() => timeNode([SLUICE, "version", "--short"], env))),
    },
    {
      name: `start-up: sluice --help (process start to exit)${label}`,
      ...timing(samples(() => timeNode([SLUICE, "--help"], env))),
    },
  ]);
  return [...cli, { name: "start-up: sluiced on examples/mesh (process start to /ready 200)", ...timing(ready) }];
}
