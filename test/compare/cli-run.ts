// The CLI comparison alone (run.ts runs it as `--cli`): `istioctl analyze` / `istioctl validate`
// (the peer build) against `sluice analyze` / `sluice validate` over every scenario. See cli.ts.
//   --scenarios DIR    run the scenarios in DIR instead of the standard set
//   --scenario NAME    run only scenarios whose name is NAME or starts with NAME/
//   --quiet            only the summary lines, not each message that is not identical
//   --source           run sluice from src/ through tsx instead of the bundle (no build needed)
//   --work DIR         where the scenarios' files go (default: a temporary folder, removed after)
// Exit status: 0 when every message is identical, 1 otherwise, 2 when no scenario matches.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { conformanceRoot } from "../conformance/corpus.ts";
import { compareCli, printCliReport, SLUICE_BUNDLE, SLUICE_SOURCE } from "./cli.ts";
import { loadScenarios } from "./scenario.ts";

const { values } = parseArgs({
  options: {
    scenarios: { type: "string" },
    scenario: { type: "string" },
    quiet: { type: "boolean", default: false },
    work: { type: "string" },
    source: { type: "boolean", default: false },
  },
});

const selected = loadScenarios(conformanceRoot(), values.scenarios).filter(
  (s) => !values.scenario || s.name === values.scenario || s.name.startsWith(`${values.scenario}/`),
);
if (selected.length === 0) {
  console.error(`compare --cli: no scenario matches ${values.scenario ?? values.scenarios}`);
  process.exit(2);
}

const work = values.work ?? mkdtempSync(join(tmpdir(), "sluice-compare-cli-"));
let results: Awaited<ReturnType<typeof compareCli>>;
try {
  results = await compareCli(selected, work, { sluice: values.source ? SLUICE_SOURCE : SLUICE_BUNDLE });
} finally {
  if (!values.work) rmSync(work, { recursive: true, force: true });
}
printCliReport(results, !values.quiet);
const differing = [...results.values()].flat().filter((c) => c.outcome !== "identical").length;
process.exit(differing > 0 ? 1 : 0);
