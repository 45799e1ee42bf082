// The comparison's baseline and ratchet, like the conformance runner's: the resources (per scenario,
// `<proxy> <TYPE> <name>`) once identical to istiod's must stay identical.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../peers/paths.ts";
import type { ResourceComparison } from "./diff.ts";
import { summaryLine, writeDiffs } from "./report.ts";

export type CompareBaseline = Record<string, string[]>;

const BASELINE_FILE = join(REPO_ROOT, "test/compare/baseline.json");
const UNSTABLE_FILE = join(REPO_ROOT, "test/compare/unstable.json");

/** Scenario → resource id → why istiod's answer for it changes from run to run (unstable.json). */
export type Unstable = Record<string, Record<string, string>>;

export function readUnstable(file = UNSTABLE_FILE): Unstable {
  const { $comment: _, ...unstable } = JSON.parse(readFileSync(file, "utf8")) as Unstable & { $comment?: string };
  return unstable;
}

export function readCompareBaseline(file = BASELINE_FILE): CompareBaseline {
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as CompareBaseline) : {};
}

/**
 * Adds the resources identical now to the baseline (it never drops one, and never records an unstable
 * one); returns how many were added.
 */
export function writeCompareBaseline(
  baseline: CompareBaseline,
  results: ReadonlyMap<string, readonly ResourceComparison[]>,
  unstable: Unstable = {},
  file = BASELINE_FILE,
): number {
  const grown: CompareBaseline = { ...baseline };
  let added = 0;
  for (const [scenario, comparisons] of results) {
    const ids = new Set(grown[scenario] ?? []);
    for (const c of comparisons) {
      if (c.outcome !== "identical" || ids.has(c.id) || unstable[scenario]?.[c.id]) continue;
      ids.add(c.id);
      added++;
    }
    grown[scenario] = [...ids].sort();
  }
  writeFileSync(file, baselineText(grown));
  return added;
}

/** The baseline as the repo's formatter (biome) writes JSON: a scenario's ids on one line when they fit in 120 columns. */
export function baselineText(baseline: CompareBaseline): string {
  const entries = Object.entries(baseline).sort(([a], [b]) => a.localeCompare(b));
  const lines = entries.map(([scenario, ids], i) => {
    const comma = i < entries.length - 1 ? "," : "";
    const oneLine = `  ${JSON.stringify(scenario)}: [${ids.map((id) => JSON.stringify(id)).join(", ")}]${comma}`;
    if (oneLine.length <= 120) return oneLine;
    return [
      `  ${JSON.stringify(scenario)}: [`,
      ...ids.map((id, j) => `    ${JSON.stringify(id)}${j < ids.length - 1 ? "," : ""}`),
      `  ]${comma}`,
    ].join("\n");
  });
  return `{\n${lines.join("\n")}\n}\n`;
}

export interface CompareVerdict {
  lines: string[];
  /** Regressions under the ratchet (resources of the baseline not identical now). */
  failed: number;
}

/** The results' key of the surfaces around xDS: ratcheted like a scenario, but not counted as resources. */
export const SURFACES = "surfaces";

/** The summary lines, the diffs written under `resultsDir`, and (with `ratchet`) the regressions. */
export function compareBaseline(
  results: ReadonlyMap<string, readonly ResourceComparison[]>,
  baseline: CompareBaseline,
  ratchet: boolean,
  resultsDir?: string,
  unstable: Unstable = {},
): CompareVerdict {
  const lines: string[] = [];
  let failed = 0;
  let identical = 0;
  let total = 0;
  for (const [scenario, comparisons] of results) {
    if (resultsDir) writeDiffs(resultsDir, scenario, comparisons);
    lines.push(summaryLine(scenario, comparisons));
    if (scenario !== SURFACES) {
      identical += comparisons.filter((c) => c.outcome === "identical").length;
      total += comparisons.length;
    }
    if (!ratchet) continue;
    const now = new Map(comparisons.map((c) => [c.id, c]));
    for (const id of baseline[scenario] ?? []) {
      if (unstable[scenario]?.[id]) continue;
      const c = now.get(id);
      if (c?.outcome === "identical") continue;
      failed++;
      const detail = !c
        ? "no longer served by either"
        : c.outcome === "differs"
          ? c.paths.slice(0, 3).join("; ")
          : c.outcome;
      lines.push(`  REGRESSED ${id}: ${detail}`);
    }
  }
  lines.push(`compare: ${identical}/${total} resources identical${ratchet ? ` (${failed} regressed)` : ""}`);
  return { lines, failed };
}
