// What the CLI end-to-end tests share: reading a spawned sluiced's log, and running the sluice CLI.
import { type ChildProcess, execFile } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));

/** The first JSON log line of sluiced that `match`es, waiting at most 60 s (it compiles as it starts). */
export function loggedLine(child: ChildProcess, match: (l: Record<string, unknown>) => boolean) {
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("sluiced did not start within 60 s")), 60_000);
    if (!child.stdout) throw new Error("no stdout");
    createInterface({ input: child.stdout }).on("line", (line) => {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (match(parsed)) {
        clearTimeout(timer);
        resolve(parsed);
      }
    });
  });
}

/**
 * Runs the CLI; asynchronous, so a test serving it (an API server, say) keeps serving. Its output is
 * stdout, followed by stderr when it fails.
 */
export async function runSluice(args: string[]): Promise<{ stdout: string; code: number }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [SLUICE, ...args]);
    return { stdout, code: 0 };
  } catch (err) {
    const failed = err as { stdout: string; stderr: string; code: number };
    return { stdout: `${failed.stdout}${failed.stderr}`, code: failed.code };
  }
}

/** Stops a spawned sluiced (SIGTERM) and waits for it to exit. */
export async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.on("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}
