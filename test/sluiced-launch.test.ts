import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { SLUICED, sluicedLaunch } from "./sluiced-launch.ts";

test("bin/sluiced.js sets glibc's malloc thresholds, caps V8's young generation and turns its memory reducer off", () => {
  const { env, nodeArgs } = sluicedLaunch();
  assert.deepEqual(env, { MALLOC_MMAP_THRESHOLD_: "32768", MALLOC_TRIM_THRESHOLD_: "131072" });
  assert.deepEqual(nodeArgs, ["--max-semi-space-size=4", "--no-memory-reducer"]);
});

test("bin/sluiced.js run as a program gets its environment and node flags", () => {
  // A module preloaded through NODE_OPTIONS reports what the process was started with.
  const report = "console.error(JSON.stringify({argv:process.execArgv,mmap:process.env.MALLOC_MMAP_THRESHOLD_}))";
  const run = spawnSync(SLUICED, ["--help"], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(report)}` },
  });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /--configDir/);
  const started = JSON.parse(run.stderr.split("\n")[0]) as { argv: string[]; mmap: string };
  assert.deepEqual(started, { argv: ["--max-semi-space-size=4", "--no-memory-reducer"], mmap: "32768" });
});
