// What a comparison writes and prints: both snapshots of every proxy, a field-path diff per resource
// that differs, and the summary lines.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Snapshot } from "./collect.ts";
import type { ResourceComparison } from "./diff.ts";

/** A path segment from any name (resource names hold `|`, `:` and `/`). */
const segment = (name: string) => name.replace(/[^A-Za-z0-9._-]+/g, "_") || "_";

const asObject = (s: Snapshot) => Object.fromEntries([...s].map(([type, m]) => [type, Object.fromEntries(m)]));

/** `<results>/<scenario>/<proxy>/{istiod,sluice}.json`: everything each control plane served the proxy. */
export function writeResults(
  results: string,
  scenario: string,
  proxy: string,
  istiod: Snapshot,
  sluice: Snapshot,
): void {
  const dir = join(results, ...scenario.split("/").map(segment), segment(proxy));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "istiod.json"), `${JSON.stringify(asObject(istiod), null, 1)}\n`);
  writeFileSync(join(dir, "sluice.json"), `${JSON.stringify(asObject(sluice), null, 1)}\n`);
}

/** `<results>/<scenario>/<proxy>/<TYPE>/<name>.diff` for each resource not identical. */
export function writeDiffs(results: string, scenario: string, comparisons: readonly ResourceComparison[]): void {
  for (const c of comparisons) {
    if (c.outcome === "identical") continue;
    const dir = join(results, ...scenario.split("/").map(segment), segment(c.proxy), c.type);
    mkdirSync(dir, { recursive: true });
    const body =
      c.outcome === "differs"
        ? c.paths.join("\n")
        : `${c.outcome === "only-istiod" ? "only istiod serves it" : "only sluice serves it"}\n${JSON.stringify(c.istiod ?? c.sluice, null, 1)}`;
    writeFileSync(join(dir, `${segment(c.name)}.diff`), `${c.id}\n${body}\n`);
  }
}

/** `<scenario>: N/M resources identical (CDS n/m, ...)`. */
export function summaryLine(name: string, comparisons: readonly ResourceComparison[]): string {
  const byType = new Map<string, [number, number]>();
  for (const c of comparisons) {
    const counts = byType.get(c.type) ?? [0, 0];
    if (c.outcome === "identical") counts[0]++;
    counts[1]++;
    byType.set(c.type, counts);
  }
  const identical = comparisons.filter((c) => c.outcome === "identical").length;
  const types = [...byType].map(([t, [n, m]]) => `${t} ${n}/${m}`).join(", ");
  return `${name}: ${identical}/${comparisons.length} resources identical${types ? ` (${types})` : ""}`;
}
