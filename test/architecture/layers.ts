// The import-graph checker behind test/architecture/layers.test.ts: reads TypeScript sources as text,
// finds every relative import (`import`, `import type`, `export … from`, side-effect `import "…"` and
// dynamic or type-position `import("…")`), resolves it to a file of the same set, and reports the
// file-level import cycles, every import that goes up the folder layering, every module that imports
// its own directory's index.ts, and every import of another top-level folder's file that is not an
// index.ts (outside an allowlist). Pure: it takes the files as a map (path relative to the
// source root → text), so the failing cases can be tested on a graph made up in memory.
import { readdirSync, readFileSync } from "node:fs";
import { join, posix, relative, sep } from "node:path";

/** Rank of each top-level folder: a folder may import only its own files and folders of lower rank. */
export type Ranks = ReadonlyMap<string, number>;

export interface LayerReport {
  /** Each strongly connected component of more than one file (or a file importing itself), sorted. */
  cycles: string[][];
  /** `from -> to (fromFolder rank r1 imports toFolder rank r2)`, one per offending import. */
  backEdges: string[];
  /** `from -> to` where `to` is the index.ts of `from`'s own directory (a barrel is for other folders). */
  ownBarrelImports: string[];
  /**
   * `from -> to` where `to` is in another top-level folder than `from` and is not an index.ts (other
   * folders import a folder through its barrel, the folder's own or a sub-folder's), unless allowed.
   * Generated code (api/gen/) is exempt.
   */
  barrelBypasses: string[];
  /** Allowlist entries (`from -> to`, `* -> to`) that no import matches any more. */
  staleAllowances: string[];
  /** Relative imports of a TypeScript file the set does not hold. */
  unresolved: string[];
  /** Files whose top-level folder has no rank. */
  unranked: string[];
}

/** Removes comments, keeping strings (and so import specifiers) and line structure. */
export function stripComments(source: string): string {
  let out = "";
  let i = 0;
  const n = source.length;
  // What the last significant character was, to tell a regular expression literal from a division.
  let last = "";
  while (i < n) {
    const c = source[i];
    const next = source[i + 1];
    if (c === "/" && next === "/") {
      while (i < n && source[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? n : end + 2;
      out += source.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      const start = i;
      i++;
      while (i < n && source[i] !== c) {
        if (source[i] === "\\") i++;
        else if (c !== "`" && source[i] === "\n") break;
        i++;
      }
      i++;
      out += source.slice(start, i);
      last = c;
      continue;
    }
    if (
      c === "/" &&
      (last === "" || "(,=:[!&|?{};+-*%<>~^".includes(last) || /\b(return|typeof|case)$/.test(out.slice(-8)))
    ) {
      // A regular expression literal: copy it whole, so quotes or slashes inside it mean nothing.
      const start = i;
      i++;
      let inClass = false;
      while (i < n && source[i] !== "\n") {
        const r = source[i];
        if (r === "\\") i++;
        else if (r === "[") inClass = true;
        else if (r === "]") inClass = false;
        else if (r === "/" && !inClass) break;
        i++;
      }
      i++;
      out += source.slice(start, i);
      last = "/";
      continue;
    }
    out += c;
    if (!/\s/.test(c)) last = c;
    i++;
  }
  return out;
}

const STATIC_IMPORT = /(?:^|[\n;}])\s*(?:import|export)\b[^;"'`]*?\bfrom\s*(["'])(\.{1,2}\/[^"'\n]*)\1/g;
const SIDE_EFFECT_IMPORT = /(?:^|[\n;}])\s*import\s*(["'])(\.{1,2}\/[^"'\n]*)\1/g;
const DYNAMIC_IMPORT = /\bimport\s*\(\s*(["'])(\.{1,2}\/[^"'\n]*)\1\s*\)/g;

/** The relative module specifiers a TypeScript source imports or re-exports, type-only ones too. */
export function relativeImports(source: string): string[] {
  const code = stripComments(source);
  const found = new Set<string>();
  for (const pattern of [STATIC_IMPORT, SIDE_EFFECT_IMPORT, DYNAMIC_IMPORT]) {
    for (const match of code.matchAll(pattern)) found.add(match[2]);
  }
  return [...found];
}

/** The file of the set a relative specifier names, `undefined` when none (a JSON file, a missing file). */
function resolve(from: string, specifier: string, files: ReadonlyMap<string, string>): string | undefined {
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [base, base.replace(/\.js$/, ".ts"), `${base}.ts`, posix.join(base, "index.ts")];
  return candidates.find((candidate) => files.has(candidate));
}

/** The file-level import graph: each file → the files of the set it imports. */
export function importGraph(files: ReadonlyMap<string, string>): {
  edges: Map<string, string[]>;
  unresolved: string[];
} {
  const edges = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const [file, source] of files) {
    const targets = new Set<string>();
    for (const specifier of relativeImports(source)) {
      const target = resolve(file, specifier, files);
      if (target !== undefined) targets.add(target);
      else if (!/\.(json|node|css|txt|ya?ml)$/.test(specifier)) unresolved.push(`${file}: "${specifier}"`);
    }
    edges.set(file, [...targets].sort());
  }
  return { edges, unresolved };
}

/** Tarjan's strongly connected components of size > 1 (and self-imports), each sorted, in order. */
export function importCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;
  // Iterative, so that a long import chain cannot overflow the call stack.
  for (const root of [...edges.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; next: number }[] = [{ node: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const targets = edges.get(frame.node) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next++];
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1 || targets.includes(frame.node)) cycles.push(component.sort());
      }
    }
  }
  return cycles.sort((a, b) => b.length - a.length || a[0].localeCompare(b[0]));
}

/** The top-level folder of a path relative to the source root (`model/push-context.ts` → `model`). */
export function folderOf(file: string): string {
  const slash = file.indexOf("/");
  return slash < 0 ? "." : file.slice(0, slash);
}

/**
 * The imports of another top-level folder's non-index file, `from -> to`, that `allowed` does not
 * name (an entry `from -> to`, or `* -> to` for every importer), and the entries of `allowed` that no
 * such import matches. Generated code (api/gen/) is exempt as an importer.
 */
export function barrelBypasses(
  edges: ReadonlyMap<string, readonly string[]>,
  allowed: Iterable<string> = [],
): { bypasses: string[]; stale: string[] } {
  const allow = new Set(allowed);
  const used = new Set<string>();
  const bypasses: string[] = [];
  for (const [file, targets] of edges) {
    if (file.startsWith("api/gen/")) continue;
    for (const target of targets) {
      if (folderOf(target) === folderOf(file) || posix.basename(target) === "index.ts") continue;
      const edge = `${file} -> ${target}`;
      const wildcard = `* -> ${target}`;
      if (allow.has(edge)) used.add(edge);
      else if (allow.has(wildcard)) used.add(wildcard);
      else bypasses.push(edge);
    }
  }
  return { bypasses: bypasses.sort(), stale: [...allow].filter((entry) => !used.has(entry)).sort() };
}

/**
 * Checks a set of files (path relative to the source root → source text) against the ranks; `direct`
 * lists the imports of another folder's non-index file that are allowed (see barrelBypasses).
 */
export function checkLayers(
  files: ReadonlyMap<string, string>,
  ranks: Ranks,
  direct: Iterable<string> = [],
): LayerReport {
  const { edges, unresolved } = importGraph(files);
  const { bypasses, stale } = barrelBypasses(edges, direct);
  const backEdges: string[] = [];
  const ownBarrelImports: string[] = [];
  const unranked = new Set<string>();
  for (const [file, targets] of edges) {
    const ownBarrel = posix.join(posix.dirname(file), "index.ts");
    for (const target of targets)
      if (target === ownBarrel && file !== ownBarrel) ownBarrelImports.push(`${file} -> ${target}`);
    const from = folderOf(file);
    const fromRank = ranks.get(from);
    if (fromRank === undefined) {
      unranked.add(file);
      continue;
    }
    for (const target of targets) {
      const to = folderOf(target);
      if (to === from) continue;
      const toRank = ranks.get(to);
      if (toRank === undefined) {
        unranked.add(target);
        continue;
      }
      if (toRank >= fromRank)
        backEdges.push(`${file} -> ${target} (${from} rank ${fromRank} imports ${to} rank ${toRank})`);
    }
  }
  return {
    cycles: importCycles(edges),
    backEdges: backEdges.sort(),
    ownBarrelImports: ownBarrelImports.sort(),
    barrelBypasses: bypasses,
    staleAllowances: stale,
    unresolved,
    unranked: [...unranked].sort(),
  };
}

/** A report as the lines of a failure message; empty when the files keep the rules. */
export function describeReport(report: LayerReport): string[] {
  const lines: string[] = [];
  for (const cycle of report.cycles) lines.push(`import cycle of ${cycle.length} files: ${cycle.join(", ")}`);
  for (const edge of report.backEdges) lines.push(`import against the layering: ${edge}`);
  for (const edge of report.ownBarrelImports) lines.push(`import of its own folder's index.ts: ${edge}`);
  for (const edge of report.barrelBypasses) lines.push(`import of another folder's non-index file: ${edge}`);
  for (const entry of report.staleAllowances) lines.push(`allowlisted direct import no longer made: ${entry}`);
  for (const missing of report.unresolved) lines.push(`unresolved import: ${missing}`);
  for (const file of report.unranked) lines.push(`folder without a rank: ${file}`);
  return lines;
}

/**
 * The non-test TypeScript files under `root` (generated code included), by path relative to it with
 * `/` separators.
 */
export function readSources(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
        files.set(relative(root, path).split(sep).join("/"), readFileSync(path, "utf8"));
      }
    }
  };
  walk(root);
  return files;
}
