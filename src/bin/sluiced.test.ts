import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SLUICED = fileURLToPath(new URL("../../bin/sluiced.js", import.meta.url));

const serviceEntry = (name: string) => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata:
  name: ${name}
  namespace: prod
spec:
  hosts: [${name}.example.com]
  ports:
  - { number: 80, name: http, protocol: HTTP }
`;

interface LogLine {
  msg: string;
  [field: string]: unknown;
}

test("sluiced loads the config directory, follows its changes, and stops cleanly on SIGTERM", async () => {
  const dir = await mkdtemp(join(tmpdir(), "sluiced-"));
  await writeFile(join(dir, "a.yaml"), `${serviceEntry("a")}---\nkind: [\n`);
  const child = spawn(process.execPath, [SLUICED, "--configDir", dir], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const lines: LogLine[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(JSON.parse(line) as LogLine);
    for (const wake of waiters.splice(0)) wake();
  });
  /** Waits (at most 20 s: the process compiles TypeScript as it starts) for a log line. */
  const logged = async (match: (line: LogLine) => boolean, what: string): Promise<LogLine> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = lines.find(match);
      if (found) return found;
      if (Date.now() > deadline) assert.fail(`sluiced did not log ${what}; it logged ${JSON.stringify(lines)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  };

  try {
    const loaded = await logged((l) => l.msg === "config loaded", "the first load");
    assert.equal(loaded.objects, 1);
    assert.equal(loaded.problems, 1);
    const problem = await logged((l) => l.level === 50 && l.where === `${join(dir, "a.yaml")}:11`, "the syntax error");
    assert.match(problem.msg, /syntax error/);

    await writeFile(join(dir, "b.yaml"), serviceEntry("b"));
    const reloaded = await logged((l) => l.msg === "config file loaded" && l.file === join(dir, "b.yaml"), "b.yaml");
    assert.equal(reloaded.objects, 1);
  } finally {
    child.kill("SIGTERM");
  }
  assert.equal(await exited, 0);
  await logged((l) => l.msg === "shutting down", "its shutdown");
});
