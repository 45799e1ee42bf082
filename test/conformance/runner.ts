// Runs corpora and judges them, either strictly (every case must pass) or against the baseline
// (only cases recorded as passing must pass: the ratchet).
import { type Baseline, type Corpus, runCase } from "./corpus.ts";

export interface ConformanceReport {
  /** What to print: one line per corpus, then its reported failures indented. */
  lines: string[];
  /** Failures that make the run fail: every failing case, or with `ratchet` only regressions. */
  failed: number;
  /** Corpus → ids of the cases passing now (corpora that were skipped are absent). */
  passing: Baseline;
}

export function runConformance(
  corpora: readonly Corpus[],
  root: string,
  baseline: Baseline,
  ratchet: boolean,
): ConformanceReport {
  const report: ConformanceReport = { lines: [], failed: 0, passing: {} };
  for (const corpus of corpora) {
    const cases = corpus.cases(root);
    if (cases.length === 0) {
      report.lines.push(`${corpus.name}: skipped (no files under ${root})`);
      continue;
    }
    const recorded = new Set(baseline[corpus.name] ?? []);
    const results = cases.map((testCase) => ({ id: testCase.id, ...runCase(testCase) }));
    const failing = results.filter((r) => !r.pass);
    report.passing[corpus.name] = results.filter((r) => r.pass).map((r) => r.id);

    const regressions = failing.filter((r) => recorded.has(r.id));
    const reported = ratchet ? regressions : failing;
    const note = ratchet
      ? ` (${regressions.length} regressed, ${failing.length - regressions.length} failing but not in the baseline)`
      : "";
    report.lines.push(`${corpus.name}: ${results.length - failing.length}/${results.length} passed${note}`);
    for (const r of reported) report.lines.push(`  FAIL ${r.id}: ${r.detail.replaceAll("\n", " ")}`);
    report.failed += reported.length;
  }
  return report;
}
