// The conformance runner (`npm run conformance`): runs every corpus present and prints
// "<corpus>: <passed>/<total> passed" with the failing cases.
//   (no flag)          exit 1 if any case fails
//   --ratchet          exit 1 only if a case recorded as passing in the baseline fails (npm test)
//   --update-baseline  add the cases passing now to the baseline (it never drops one), then as --ratchet
import { CORPORA } from "./corpora.ts";
import { type Baseline, conformanceRoot, growBaseline, readBaseline, writeBaseline } from "./corpus.ts";
import { runConformance } from "./runner.ts";

const FLAGS = new Set(["--ratchet", "--update-baseline"]);
const args = process.argv.slice(2);
const unknownArgs = args.filter((arg) => !FLAGS.has(arg));
if (unknownArgs.length > 0) {
  process.stderr.write(`unknown argument: ${unknownArgs.join(" ")}\nusage: run.ts [--ratchet] [--update-baseline]\n`);
  process.exit(2);
}
const updateBaseline = args.includes("--update-baseline");

const baseline = readBaseline();
const report = runConformance(CORPORA, conformanceRoot(), baseline, updateBaseline || args.includes("--ratchet"));
for (const line of report.lines) console.log(line);

if (updateBaseline) {
  const grown = growBaseline(baseline, report.passing);
  const count = (b: Baseline) => Object.values(b).reduce((n, ids) => n + ids.length, 0);
  writeBaseline(grown);
  console.log(`baseline: ${count(grown) - count(baseline)} cases added, ${count(grown)} recorded`);
}
process.exitCode = report.failed > 0 ? 1 : 0;
