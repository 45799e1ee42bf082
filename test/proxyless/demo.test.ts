// `npm run demo` end to end: the script starts sluiced, two echo servers and a proxyless client,
// observes the 90/10 split, edits its copy of the VirtualService to 50/50 and observes that; these
// tests run it as a user would and check what it reports, that the checked-in example is untouched,
// and that nothing it started is left running, also when it is interrupted.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const EXAMPLE_CONFIG = join(ROOT, "examples", "proxyless", "config");

interface Run {
  child: ChildProcess;
  /** Everything printed on stdout so far. */
  stdout: () => string;
  exited: Promise<{ code: number | null; stderr: string }>;
}

function runDemo(): Run {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/demo.ts"], { cwd: ROOT });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, stderr })),
  );
  return { child, stdout: () => stdout, exited };
}

function exampleFiles(): Map<string, string> {
  return new Map(readdirSync(EXAMPLE_CONFIG).map((f) => [f, readFileSync(join(EXAMPLE_CONFIG, f), "utf8")]));
}

/** The ports the demo says its programs listen on: sluiced's, and the echo servers' once they serve. */
function announcedPorts(output: string): number[] {
  const sluiced = /serving xDS on port (\d+)/.exec(output);
  assert.ok(sluiced, `sluiced's port announced in:\n${output}`);
  const echo = /on ports (\d+) and (\d+)\./.exec(output);
  return [Number(sluiced[1]), ...(echo ? [Number(echo[1]), Number(echo[2])] : [])];
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** Asserts the programs the demo started have stopped and its temporary copy is gone. */
async function assertCleanedUp(output: string): Promise<void> {
  for (const port of announcedPorts(output)) assert.equal(await isListening(port), false, `port ${port} still open`);
  const configDir = /examples\/proxyless\/config in (\S+)/.exec(output)?.[1];
  assert.ok(configDir, "temporary config directory announced");
  assert.equal(existsSync(configDir), false, `${configDir} was not removed`);
}

test("the demo shows the 90/10 split, then the 50/50 split after the file edit, and cleans up", {
  timeout: 120_000,
}, async () => {
  const before = exampleFiles();
  const run = runDemo();
  const { code, stderr } = await run.exited;
  const output = run.stdout();
  assert.equal(code, 0, `demo failed:\n${output}\n${stderr}`);
  assert.equal(announcedPorts(output).length, 3, "sluiced's and both echo servers' ports announced");

  const observed = [...output.matchAll(/Observed: v1 answered (\d+) calls \([\d.]+%\), v2 answered (\d+)/g)].map(
    (m) => ({ v1: Number(m[1]), v2: Number(m[2]) }),
  );
  assert.equal(observed.length, 2, output);
  const [first, second] = observed;
  assert.equal(first.v1 + first.v2, 1000);
  assert.equal(second.v1 + second.v2, 1000);
  // ±6 points: both are more than 3.8 standard deviations away from a false failure.
  assert.ok(first.v2 >= 40 && first.v2 <= 160, `about 10% on v2 before the edit: ${first.v2}`);
  assert.ok(second.v2 >= 440 && second.v2 <= 560, `about 50% on v2 after the edit: ${second.v2}`);
  assert.match(output, /The client followed the new rule [\d.]+ s after the file was saved/);

  assert.deepEqual(exampleFiles(), before, "the checked-in example is unchanged");
  await assertCleanedUp(output);
});

test("Ctrl-C stops everything the demo started", { timeout: 120_000 }, async () => {
  const run = runDemo();
  // Interrupt once sluiced is up; the agents and the servers are starting.
  await new Promise<void>((resolve, reject) => {
    run.child.stdout?.on("data", () => {
      if (run.stdout().includes("serving xDS on port")) resolve();
    });
    run.exited.then(() => reject(new Error(`the demo ended before it was interrupted:\n${run.stdout()}`)));
  });
  run.child.kill("SIGINT");
  const { code } = await run.exited;
  const output = run.stdout();
  assert.equal(code, 130);
  assert.match(output, /Interrupted: stopping everything the demo started/);
  await assertCleanedUp(output);
});
