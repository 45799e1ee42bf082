// What a conformance corpus is, where the corpora live, and the committed baseline of passing cases.
// Corpora are Istio's own test data, kept outside the repository (../shared/conformance/istio).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

export interface CaseResult {
  pass: boolean;
  /** Why it failed (or what it checked), on one line. */
  detail: string;
}

export interface ConformanceCase {
  /** Stable across runs: the baseline records it. */
  id: string;
  run(): CaseResult;
}

export interface Corpus {
  name: string;
  /** The corpus's cases under `root`; none when its files are absent (the corpus is then skipped). */
  cases(root: string): ConformanceCase[];
}

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** $SLUICE_CONFORMANCE_DIR, or ../shared/conformance/istio beside the repository. */
export function conformanceRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.SLUICE_CONFORMANCE_DIR
    ? resolve(env.SLUICE_CONFORMANCE_DIR)
    : resolve(REPO_ROOT, "../shared/conformance/istio");
}

/** Corpus name → sorted ids of the cases known to pass. It only grows. */
export type Baseline = Record<string, string[]>;

export const BASELINE_PATH = resolve(REPO_ROOT, "test/conformance-baseline.json");

export function readBaseline(path: string = BASELINE_PATH): Baseline {
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Baseline) : {};
}

/** The baseline with `passing` added; no id is ever removed. Corpora and ids come out sorted. */
export function growBaseline(baseline: Baseline, passing: Baseline): Baseline {
  const grown: Baseline = {};
  const names = [...new Set([...Object.keys(baseline), ...Object.keys(passing)])].sort();
  for (const name of names) {
    grown[name] = [...new Set([...(baseline[name] ?? []), ...(passing[name] ?? [])])].sort();
  }
  return grown;
}

export function writeBaseline(baseline: Baseline, path: string = BASELINE_PATH): void {
  writeFileSync(path, `${JSON.stringify(baseline, null, 2)}\n`);
}

/** Runs a case; a case that throws fails with the exception as its detail. */
export function runCase(testCase: ConformanceCase): CaseResult {
  try {
    return testCase.run();
  } catch (err) {
    return { pass: false, detail: `threw: ${(err as Error).stack ?? String(err)}` };
  }
}
