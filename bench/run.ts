// `npm run bench`: runs every benchmark, prints a table and writes bench/results/latest.json.
// Not part of `npm test`: speed is reported, never asserted.
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import type { Timing } from "./measure.ts";
import { benchRegistry } from "./registry.ts";
import { benchTemplates } from "./templates-bench.ts";

export interface BenchResult extends Timing {
  name: string;
  /** For a change benchmark: how many times cheaper than the full rebuild it replaces. */
  ratio?: number;
}

const results = [...benchRegistry(), ...benchTemplates()];

const fmt = (us: number) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);
for (const r of results) {
  const ratio = r.ratio === undefined ? "" : `  (${Math.round(r.ratio)}x cheaper than a full build)`;
  console.log(`${r.name.padEnd(70)} median ${fmt(r.medianUs).padStart(10)}  p99 ${fmt(r.p99Us).padStart(10)}${ratio}`);
}
const machine = { cpu: cpus()[0]?.model, cores: cpus().length, node: process.version };
writeFileSync(
  new URL("./results/latest.json", import.meta.url),
  `${JSON.stringify({ date: new Date().toISOString(), machine, results }, null, 2)}\n`,
);
