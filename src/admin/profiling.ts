// Profiles in place of Go's pprof handlers (/debug/pprof/*): a CPU profile from the V8 inspector
// (Chrome DevTools .cpuprofile JSON) and a V8 heap snapshot, both readable by Chrome DevTools.
import { Session } from "node:inspector/promises";
import type { Readable } from "node:stream";
import { getHeapSnapshot } from "node:v8";

/** The profiles the HTTP server serves under /debug/pprof/, with Istio-style help. */
export const PROFILING_ENDPOINTS: readonly { path: string; help: string }[] = [
  { path: "pprof/", help: "Displays the profiling index" },
  { path: "pprof/cmdline", help: "The command line invocation of the current program" },
  { path: "pprof/profile", help: "CPU profile (?seconds=N, default 30), as a .cpuprofile" },
  { path: "pprof/heap", help: "V8 heap snapshot, as a .heapsnapshot" },
];

let profiling = false;

/** Go's pprof.Profile semantics: `seconds` missing or not positive means 30. */
export function profileSeconds(query: URLSearchParams): number {
  const seconds = Number.parseInt(query.get("seconds") ?? "", 10);
  return Number.isInteger(seconds) && seconds > 0 ? seconds : 30;
}

/** A CPU profile over `seconds`; an Error while another profile runs, as Go refuses a second one. */
export async function cpuProfile(seconds: number): Promise<string | Error> {
  if (profiling) return new Error("Could not enable CPU profiling: cpu profiling already in use");
  profiling = true;
  const session = new Session();
  try {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const { profile } = await session.post("Profiler.stop");
    return JSON.stringify(profile);
  } finally {
    session.disconnect();
    profiling = false;
  }
}

export function heapSnapshot(): Readable {
  return getHeapSnapshot();
}

/** Go's pprof.Cmdline: the arguments separated by NUL bytes. */
export function commandLine(): string {
  return process.argv.join("\0");
}
