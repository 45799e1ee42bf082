#!/usr/bin/env node
// Runs the TypeScript entry point through tsx, so the package needs no separate compile step.
//
// On Linux it first starts itself once more with fixed glibc malloc thresholds: glibc raises its
// mmap threshold each time it frees a large mapped block, then serves the 1-5 MB responses of a
// mass sync from its heap and keeps that memory after they are freed (~200 MiB of RSS with 2,000
// unscoped sidecars). glibc reads the thresholds from the environment at start only. Setting
// MALLOC_MMAP_THRESHOLD_ yourself (to any value) runs sluiced in this process as it is.
import { spawn } from "node:child_process";

const MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: "131072", MALLOC_TRIM_THRESHOLD_: "131072" };
const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR2"];
/** Set for the child only: it is sluiced, started by this launcher. */
const LAUNCHED = "SLUICED_LAUNCHED";

if (process.platform === "linux" && process.env.MALLOC_MMAP_THRESHOLD_ === undefined) {
  // Its own process group, so a terminal's Ctrl-C reaches sluiced once (forwarded), not twice.
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, ...MALLOC_ENV, [LAUNCHED]: "1" },
    detached: true,
  });
  for (const signal of FORWARDED_SIGNALS) process.on(signal, () => child.kill(signal));
  // The IPC channel only tells the child when the launcher is gone; the child keeps this process up.
  child.channel?.unref();
  child.on("exit", (code, signal) => {
    if (signal) {
      // Die of the same signal, so whoever started the launcher sees what happened to sluiced.
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
} else {
  if (process.env[LAUNCHED]) {
    delete process.env[LAUNCHED];
    // A launcher killed outright (SIGKILL) cannot forward anything: stop as on SIGTERM.
    process.channel?.unref();
    process.once("disconnect", () => process.kill(process.pid, "SIGTERM"));
  }
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/bin/sluiced.ts");
}
