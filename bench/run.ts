// `npm run bench [-- flags]`: runs the benchmarks, prints a table and writes bench/results/latest.json.
// Not part of `npm test`: speed is reported, never asserted. Sizes are flags, so a loaded machine can
// run a small version: `npm run bench -- --suite load --services 50 --proxies 10`. `--services` sets
// both the micro templates' size (default: Istio's size for each, 100 or 1,000) and the load mesh's (default 1,000).
// `--against istiod` runs the load test side by side with istiod in a test cluster
// (bench/load/against-istiod.ts) and the micro benchmarks beside Istio's own Go benchmarks of the
// same cases (bench/istiod-micro.ts); `--json FILE` writes those figures as records, and the last line
// printed is the verdict. `--endpoint-changes N` times N endpoint changes a run instead of 5 (a steadier
// p99, as it lies inside the slowest change).
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { benchAmbient } from "./ambient.ts";
import { microAgainstIstiod } from "./istiod-micro.ts";
import {
  DEFAULT_ENDPOINT_CHANGES,
  type FigureRecord,
  figureRecords,
  printRecords,
  printSideBySide,
  runAgainstIstiod,
  type SideBySideRun,
} from "./load/against-istiod.ts";
import { type LoadOptions, type LoadReport, printLoadReport, printLoadTable, runLoad } from "./load/run-load.ts";
import type { Timing } from "./measure.ts";
import { benchProxyless } from "./proxyless.ts";
import { benchRegistry } from "./registry.ts";
import { benchStartup } from "./startup.ts";
import { benchTemplates, DEFAULT_MICRO } from "./templates-bench.ts";

export interface BenchResult extends Timing {
  name: string;
  /** For a change benchmark: how many times cheaper than the full rebuild it replaces. */
  ratio?: number;
  /** For a generation benchmark: resources and bytes (Any values, as Istio's kb/msg) of one response. */
  resourcesPerMsg?: number;
  bytesPerMsg?: number;
}

const list = (value: string) => value.split(",").filter((v) => v !== "");

const { values: flags } = parseArgs({
  options: {
    suite: { type: "string", default: "all" },
    services: { type: "string" },
    runs: { type: "string" },
    benchtime: { type: "string" },
    templates: { type: "string" },
    micro: { type: "string" },
    endpoints: { type: "string", default: "10" },
    proxies: { type: "string", default: "100,500,2000" },
    meshes: { type: "string", default: "scoped,unscoped" },
    protocols: { type: "string", default: "sotw,delta" },
    "sluiced-profile": { type: "string" },
    "endpoint-changes": { type: "string" },
    against: { type: "string" },
    json: { type: "string" },
  },
});
const suites =
  flags.suite === "all" ? ["startup", "registry", "ambient", "micro", "proxyless", "load"] : list(flags.suite ?? "");
const number = (value: string | undefined, fallback: number) => (value === undefined ? fallback : Number(value));

if (flags.against !== undefined && flags.against !== "istiod") {
  throw new Error(`--against ${flags.against}: the only control plane to run against is istiod`);
}
const endpointChanges = number(flags["endpoint-changes"], DEFAULT_ENDPOINT_CHANGES);
if (!Number.isInteger(endpointChanges) || endpointChanges < 1) {
  throw new Error(`--endpoint-changes ${flags["endpoint-changes"]}: must be a whole number of changes, at least 1`);
}
const results: BenchResult[] = [];
const records: FigureRecord[] = [];
if (suites.includes("startup")) results.push(...(await benchStartup(number(flags.runs, 20))));
if (suites.includes("registry")) results.push(...benchRegistry());
if (suites.includes("ambient")) results.push(...benchAmbient());
if (suites.includes("micro")) {
  const benchtimeMs = number(flags.benchtime, DEFAULT_MICRO.benchtimeMs);
  const micro = benchTemplates({
    services: flags.services === undefined ? DEFAULT_MICRO.services : Number(flags.services),
    benchtimeMs,
    runs: number(flags.runs, DEFAULT_MICRO.runs),
    templates: flags.templates ? list(flags.templates) : DEFAULT_MICRO.templates,
    groups: flags.micro ? list(flags.micro) : DEFAULT_MICRO.groups,
  });
  results.push(...micro);
  if (flags.against === "istiod") records.push(...microAgainstIstiod(micro, benchtimeMs));
}

if (suites.includes("proxyless")) results.push(await benchProxyless(number(flags.runs, 20)));

const fmt = (us: number) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);
for (const r of results) {
  const ratio = r.ratio === undefined ? "" : `  (${Math.round(r.ratio)}x cheaper than a full build)`;
  const size =
    r.bytesPerMsg === undefined ? "" : `  ${(r.bytesPerMsg / 1000).toFixed(1)} kB/msg  ${r.resourcesPerMsg} res/msg`;
  console.log(
    `${r.name.padEnd(78)} median ${fmt(r.medianUs).padStart(10)}  p99 ${fmt(r.p99Us).padStart(10)}${size}${ratio}`,
  );
}

const load: LoadReport[] = [];
const sideBySide: SideBySideRun[] = [];
if (suites.includes("load")) {
  const options: LoadOptions = {
    services: number(flags.services, 1000),
    endpoints: Number(flags.endpoints),
    proxies: list(flags.proxies ?? "").map(Number),
    meshes: list(flags.meshes ?? "") as LoadOptions["meshes"],
    protocols: list(flags.protocols ?? "") as LoadOptions["protocols"],
    sluicedProfileDir: flags["sluiced-profile"],
    endpointChanges,
  };
  if (flags.against === "istiod") {
    for await (const run of runAgainstIstiod(options)) {
      printSideBySide(run);
      sideBySide.push(run);
    }
    records.push(...figureRecords(sideBySide));
  } else {
    for await (const report of runLoad(options)) {
      printLoadReport(report);
      load.push(report);
    }
    printLoadTable(load);
  }
}
if (flags.against === "istiod") printRecords(records);
if (flags.json) writeFileSync(flags.json, `${JSON.stringify(records, null, 2)}\n`);

const machine = { cpu: cpus()[0]?.model, cores: cpus().length, memGiB: totalmem() / 2 ** 30, node: process.version };
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
writeFileSync(
  new URL("./results/latest.json", import.meta.url),
  `${JSON.stringify({ date: new Date().toISOString(), machine, argv: process.argv.slice(2), results, load, sideBySide }, null, 2)}\n`,
);
