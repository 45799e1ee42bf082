// `npm run compare -- --cli`: the CLI against istioctl. For each scenario, writes its objects to one
// file (and its MeshConfig to another), runs `istioctl analyze --use-kube=false` and `sluice analyze`
// over them with JSON output, and `istioctl validate` and `sluice validate`, and compares what each
// reports:
//   analyze  — the multiset of messages, keyed by (code, resource, level); under one key the
//              messages' texts and lines must match too.
//   validate — per object of the scenario, valid or not, and the text of each error and warning.
// Only presentation is normalized: istioctl's older `Kind name.namespace` origins, the docs version in
// istio.io links, istioctl validate's `Kind/namespace/name:` prefixes and Sluice's field-path prefix.
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { REPO_ROOT, requirePeer } from "../peers/paths.ts";
import type { KubeObject, Scenario } from "./scenario.ts";

export interface CliComparison {
  /** `analyze <code> <Kind> <namespace>/<name> <level>` or `validate <Kind> <namespace>/<name>`. */
  id: string;
  outcome: "identical" | "only-istiod" | "only-sluice" | "differs";
  /** What each side said, when they differ (or what the one side said). */
  detail?: string;
}

/** One message of `analyze -o json`, with its origin normalized to `Kind namespace/name`. */
export interface AnalyzeMessage {
  code: string;
  level: string;
  resource: string;
  message: string;
  /** `file:line`, or "" when the message has none. */
  reference: string;
}

/** What one tool's validate said about one resource (`Kind namespace/name`). */
export interface ValidateVerdict {
  valid: boolean;
  errors: string[];
  warnings: string[];
}

// ---------------------------------------------------------------------------------------------------
// Normalization (presentation only)

/**
 * `Kind namespace/name` from an analyzer origin. istioctl printed `Kind name.namespace` before 1.22;
 * a name may hold dots, so that form is read only when its last segment is one of `namespaces`.
 */
export function normalizeOrigin(origin: string, namespaces: ReadonlySet<string> = new Set()): string {
  const m = /^(\S+) (\S+)$/.exec(origin.trim());
  if (!m || m[2].includes("/")) return origin.trim();
  const [, kind, ref] = m;
  const dot = ref.lastIndexOf(".");
  if (dot > 0 && namespaces.has(ref.slice(dot + 1))) return `${kind} ${ref.slice(dot + 1)}/${ref.slice(0, dot)}`;
  return `${kind} ${ref}`;
}

/** istio.io links name the docs of istioctl's version (`/v1.31/`); Sluice's name `/latest/`. */
export function normalizeText(text: string): string {
  return text.replace(/https:\/\/istio\.io\/v\d+\.\d+\//g, "https://istio.io/latest/");
}

/** The messages of `analyze -o json` (or an empty list for an empty output). */
export function parseAnalyzeJson(stdout: string, namespaces: ReadonlySet<string> = new Set()): AnalyzeMessage[] {
  const text = stdout.trim();
  if (text === "") return [];
  const list = JSON.parse(text) as {
    code?: string;
    level?: string;
    origin?: string;
    message?: string;
    reference?: string;
  }[];
  if (!Array.isArray(list)) throw new Error("analyze -o json: not an array");
  return list.map((m) => ({
    code: String(m.code ?? ""),
    level: String(m.level ?? ""),
    resource: normalizeOrigin(String(m.origin ?? ""), namespaces),
    message: normalizeText(String(m.message ?? "")),
    reference: String(m.reference ?? ""),
  }));
}

/** `Kind namespace/name` (cluster-scoped: `Kind name`). */
export function resourceId(
  kind: string,
  namespace: string | null | undefined,
  name: string | null | undefined,
): string {
  return namespace ? `${kind} ${namespace}/${name ?? ""}` : `${kind} ${name ?? ""}`;
}

/**
 * istioctl validate's report (its stderr and stdout together): per resource, its errors (the list
 * after `Error: N error(s) occurred:`) and warnings (after `"<file>" has warnings:`), each item
 * `\t* Kind/namespace/name: message`. Items naming no resource (a file that does not decode) go
 * under "-". Deployments without the canonical labels get a line of their own,
 * `deployment "name/namespace:" may not provide Istio metrics ...`, which is a warning.
 */
export function parseIstioctlValidate(output: string): Map<string, ValidateVerdict> {
  const out = new Map<string, ValidateVerdict>();
  const verdict = (resource: string) => {
    const v = out.get(resource) ?? { valid: true, errors: [], warnings: [] };
    out.set(resource, v);
    return v;
  };
  let section: "errors" | "warnings" | undefined;
  let last: { list: string[]; index: number } | undefined;
  for (const line of output.split("\n")) {
    if (/^Error: \d+ errors? occurred:/.test(line)) {
      section = "errors";
      last = undefined;
      continue;
    }
    if (/^".*" has warnings: ?$/.test(line)) {
      section = "warnings";
      last = undefined;
      continue;
    }
    const deployment = /^deployment "([^"/]*)\/([^"]*):" (may not provide .*)$/.exec(line);
    if (deployment) {
      verdict(resourceId("Deployment", deployment[2], deployment[1])).warnings.push(normalizeText(deployment[3]));
      last = undefined;
      continue;
    }
    const item = /^\t\* (.*)$/.exec(line);
    if (item && section) {
      const m = /^([A-Za-z0-9]*)\/([^/]*)\/([^:]*): (.*)$/s.exec(item[1]);
      const resource = m ? resourceId(m[1], m[2], m[3]) : "-";
      const v = verdict(resource);
      const list = section === "errors" ? v.errors : v.warnings;
      if (section === "errors") v.valid = false;
      list.push(normalizeText(m ? m[4] : item[1]));
      last = { list, index: list.length - 1 };
      continue;
    }
    // A message of several lines continues until a blank line or the next item.
    if (last && line.trim() !== "" && !/^"/.test(line) && !/^Error: /.test(line)) {
      last.list[last.index] += `\n${line}`;
    } else if (line.trim() === "") {
      last = undefined;
    } else if (/^Error: /.test(line)) {
      // A single error cobra prints without a list.
      const v = verdict("-");
      v.valid = false;
      v.errors.push(line.slice("Error: ".length));
      last = undefined;
    }
  }
  return out;
}

interface SluiceValidateDocument {
  kind: string | null;
  namespace: string | null;
  name: string | null;
  valid: boolean;
  errors: string[];
  warnings: string[];
}

/** `sluice validate -o json`, per resource (documents that do not decode under "-"). */
export function parseSluiceValidate(stdout: string): Map<string, ValidateVerdict> {
  const out = new Map<string, ValidateVerdict>();
  for (const d of JSON.parse(stdout) as SluiceValidateDocument[]) {
    const resource = d.kind === null ? "-" : resourceId(d.kind, d.namespace, d.name);
    const v = out.get(resource) ?? { valid: true, errors: [], warnings: [] };
    v.valid &&= d.valid;
    v.errors.push(...d.errors.map(normalizeText));
    v.warnings.push(...d.warnings.map(normalizeText));
    out.set(resource, v);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Comparison

const short = (s: string) => (s.length > 300 ? `${s.slice(0, 297)}...` : s);

/** `message @ line`: what must match between two messages under one (code, resource, level). */
function messageKey(m: AnalyzeMessage): string {
  const line = /:(\d+)$/.exec(m.reference)?.[1];
  return line ? `${m.message} @ line ${line}` : m.message;
}

/** Multiset difference of two lists of strings: what only `a` holds, what only `b` holds. */
function multisetDiff(a: readonly string[], b: readonly string[]): [string[], string[]] {
  const rest = [...b];
  const onlyA: string[] = [];
  for (const x of a) {
    const i = rest.indexOf(x);
    if (i >= 0) rest.splice(i, 1);
    else onlyA.push(x);
  }
  return [onlyA, rest];
}

/**
 * The analyze messages of both tools, one comparison per (code, resource, level): identical when
 * both report it the same number of times with the same texts and lines. istioctl is not always
 * deterministic (some analyzers list resources in map order): `otherRuns` are its messages from
 * further runs over the same files, and Sluice's messages under a key are identical when they match
 * any one run's.
 */
export function compareAnalyze(
  istiod: readonly AnalyzeMessage[],
  sluice: readonly AnalyzeMessage[],
  otherRuns: readonly (readonly AnalyzeMessage[])[] = [],
): CliComparison[] {
  const group = (list: readonly AnalyzeMessage[]) => {
    const m = new Map<string, string[]>();
    for (const msg of list) {
      const key = `${msg.code} ${msg.resource} ${msg.level}`;
      m.set(key, [...(m.get(key) ?? []), messageKey(msg)]);
    }
    return m;
  };
  const runs = [istiod, ...otherRuns].map(group);
  const ours = group(sluice);
  const keys = [...new Set([...runs.flatMap((r) => [...r.keys()]), ...ours.keys()])].sort();
  return keys.map((key): CliComparison => {
    const id = `analyze ${key}`;
    const variants = runs.map((r) => r.get(key) ?? []);
    const b = ours.get(key) ?? [];
    const same = (a: readonly string[]) => {
      const [onlyA, onlyB] = multisetDiff(a, b);
      return onlyA.length === 0 && onlyB.length === 0;
    };
    if (variants.some(same)) return { id, outcome: "identical" };
    const a = variants.find((v) => v.length > 0) ?? [];
    if (b.length === 0) return { id, outcome: "only-istiod", detail: short(a.join(" | ")) };
    if (a.length === 0) return { id, outcome: "only-sluice", detail: short(b.join(" | ")) };
    const [onlyA, onlyB] = multisetDiff(a, b);
    return { id, outcome: "differs", detail: short(`istiod: ${onlyA.join(" | ")} — sluice: ${onlyB.join(" | ")}`) };
  });
}

/**
 * Whether Sluice's `text` says istioctl's `reference`: the same text, or the same after a field
 * path Sluice puts in front (`spec.http[0].route: <message>`).
 */
export function sameValidateText(reference: string, text: string): boolean {
  return text === reference || text.endsWith(`: ${reference}`);
}

function textsDiffer(istiod: readonly string[], sluice: readonly string[]): [string[], string[]] {
  const rest = [...sluice];
  const onlyIstiod: string[] = [];
  for (const x of istiod) {
    const i = rest.findIndex((s) => sameValidateText(x, s));
    if (i >= 0) rest.splice(i, 1);
    else onlyIstiod.push(x);
  }
  return [onlyIstiod, rest];
}

const describeVerdict = (v: ValidateVerdict) =>
  [
    v.valid ? "valid" : "invalid",
    ...v.errors.map((e) => `error: ${e}`),
    ...v.warnings.map((w) => `warning: ${w}`),
  ].join("; ");

/**
 * Validate's verdict on each resource (those of `resources`, then any other either tool named):
 * identical when both say valid or invalid alike with the same errors and warnings; only-istiod or
 * only-sluice when just one has anything to say about it.
 */
export function compareValidate(
  resources: readonly string[],
  istiod: ReadonlyMap<string, ValidateVerdict>,
  sluice: ReadonlyMap<string, ValidateVerdict>,
): CliComparison[] {
  const clean: ValidateVerdict = { valid: true, errors: [], warnings: [] };
  const all = [...new Set([...resources, ...[...istiod.keys()].sort(), ...[...sluice.keys()].sort()])];
  return all.map((resource): CliComparison => {
    const id = `validate ${resource}`;
    const a = istiod.get(resource) ?? clean;
    const b = sluice.get(resource) ?? clean;
    const said = (v: ValidateVerdict) => !v.valid || v.errors.length > 0 || v.warnings.length > 0;
    if (!said(a) && !said(b)) return { id, outcome: "identical" };
    if (!said(b)) return { id, outcome: "only-istiod", detail: short(describeVerdict(a)) };
    if (!said(a)) return { id, outcome: "only-sluice", detail: short(describeVerdict(b)) };
    const [errA, errB] = textsDiffer(a.errors, b.errors);
    const [warnA, warnB] = textsDiffer(a.warnings, b.warnings);
    if (a.valid === b.valid && [errA, errB, warnA, warnB].every((l) => l.length === 0))
      return { id, outcome: "identical" };
    return { id, outcome: "differs", detail: short(`istiod: ${describeVerdict(a)} — sluice: ${describeVerdict(b)}`) };
  });
}

// ---------------------------------------------------------------------------------------------------
// Running both tools

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const options = { cwd: REPO_ROOT, maxBuffer: 256 * 1024 * 1024, timeout: 120_000 };
    execFile(file, args, options, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** How to run `sluice`: the bundled program (`node scripts/build.mjs` rebuilds it after a change). */
export const SLUICE_BUNDLE = [process.execPath, join(REPO_ROOT, "bin/sluice.js")];
/** `sluice` from src/ through tsx: slower to start, but needs no build. */
export const SLUICE_SOURCE = [process.execPath, "--import", "tsx", join(REPO_ROOT, "src/bin/sluice.ts")];

export interface CliOptions {
  /** The command that runs `sluice` (default SLUICE_BUNDLE). */
  sluice?: readonly string[];
}

/** A path segment from a scenario name. */
const segment = (name: string) => name.replace(/[^A-Za-z0-9._-]+/g, "_") || "_";

/**
 * A tool's analyze messages, or one message `analyze-failed` on resource "-" naming its exit status
 * and first line of stderr when it printed no JSON (a document it could not read).
 */
function analyzeMessages(r: Run, namespaces: ReadonlySet<string>): AnalyzeMessage[] {
  try {
    // With -o json both exit 0 unless the run failed (an unreadable file: 1).
    if (r.code !== 0 && r.stdout.trim() === "") throw new Error("no output");
    return parseAnalyzeJson(r.stdout, namespaces);
  } catch {
    const first = r.stderr.split("\n").find((l) => l.trim() !== "") ?? "";
    return [
      { code: "analyze-failed", level: "Error", resource: "-", message: `exit ${r.code}: ${first}`, reference: "" },
    ];
  }
}

function validateVerdicts(r: Run, parse: (r: Run) => Map<string, ValidateVerdict>): Map<string, ValidateVerdict> {
  try {
    return parse(r);
  } catch (e) {
    const first = r.stderr.split("\n").find((l) => l.trim() !== "") ?? String(e);
    return new Map([["-", { valid: false, errors: [`validate failed (exit ${r.code}): ${first}`], warnings: [] }]]);
  }
}

/** Writes the scenario's objects (and MeshConfig) under `dir`: `objects.yaml`, `mesh.yaml`. */
export function writeScenarioFiles(scenario: Scenario, dir: string): { objects: string; mesh?: string } {
  mkdirSync(dir, { recursive: true });
  const objects = join(dir, "objects.yaml");
  writeFileSync(objects, scenario.objects.map((o) => stringify(o, { lineWidth: 0 })).join("---\n"));
  if (scenario.meshConfig === undefined) return { objects };
  const mesh = join(dir, "mesh.yaml");
  writeFileSync(mesh, scenario.meshConfig);
  return { objects, mesh };
}

const objectResource = (o: KubeObject) => resourceId(o.kind, o.metadata.namespace, o.metadata.name);

/** Both tools over one scenario: analyze (every namespace, files only) and validate. */
export async function compareScenarioCli(
  scenario: Scenario,
  dir: string,
  istioctl: string,
  options: CliOptions = {},
): Promise<CliComparison[]> {
  const [node, ...prefix] = options.sluice ?? SLUICE_BUNDLE;
  const sluiceCli = (args: string[]) => run(node, [...prefix, ...args]);
  const files = writeScenarioFiles(scenario, dir);
  const namespaces = new Set(scenario.objects.flatMap((o) => (o.metadata.namespace ? [o.metadata.namespace] : [])));
  const mesh = files.mesh ? ["--meshConfigFile", files.mesh] : [];
  const istioctlAnalyze = () =>
    run(istioctl, ["analyze", "--use-kube=false", "-A", "-o", "json", ...mesh, files.objects]);
  const [theirAnalyze, ourAnalyze] = await Promise.all([
    istioctlAnalyze(),
    sluiceCli(["analyze", "-A", "-o", "json", ...mesh, files.objects]),
  ]);
  // istioctl runs in well under a second: two more runs show what it varies.
  const moreRuns = [await istioctlAnalyze(), await istioctlAnalyze()];
  const [theirValidate, ourValidate] = await Promise.all([
    run(istioctl, ["validate", "-f", files.objects]),
    sluiceCli(["validate", "-o", "json", "-f", files.objects]),
  ]);
  return [
    ...compareAnalyze(
      analyzeMessages(theirAnalyze, namespaces),
      analyzeMessages(ourAnalyze, namespaces),
      moreRuns.map((r) => analyzeMessages(r, namespaces)),
    ),
    ...compareValidate(
      scenario.objects.map(objectResource),
      validateVerdicts(theirValidate, (r) => parseIstioctlValidate(`${r.stderr}\n${r.stdout}`)),
      validateVerdicts(ourValidate, (r) => parseSluiceValidate(r.stdout)),
    ),
  ];
}

/** Both tools over every scenario; the files go under `workDir/<scenario>/`. */
export async function compareCli(
  scenarios: Scenario[],
  workDir: string,
  options: CliOptions = {},
): Promise<Map<string, CliComparison[]>> {
  const istioctl = requirePeer("istioctl");
  const results = new Map<string, CliComparison[]>();
  for (const scenario of scenarios) {
    const dir = join(workDir, ...scenario.name.split("/").map(segment));
    results.set(scenario.name, await compareScenarioCli(scenario, dir, istioctl, options));
  }
  return results;
}

// ---------------------------------------------------------------------------------------------------
// Report

/** `<scenario>: N/M messages identical (analyze n/m, validate n/m)`. */
export function cliSummaryLine(name: string, comparisons: readonly CliComparison[]): string {
  const byVerb = new Map<string, [number, number]>();
  for (const c of comparisons) {
    const verb = c.id.split(" ")[0];
    const counts = byVerb.get(verb) ?? [0, 0];
    if (c.outcome === "identical") counts[0]++;
    counts[1]++;
    byVerb.set(verb, counts);
  }
  const identical = comparisons.filter((c) => c.outcome === "identical").length;
  const verbs = [...byVerb].map(([v, [n, m]]) => `${v} ${n}/${m}`).join(", ");
  return `${name}: ${identical}/${comparisons.length} messages identical${verbs ? ` (${verbs})` : ""}`;
}

/**
 * The report: a line per scenario, with each comparison that is not identical below it when
 * `verbose`, then `cli: N/M messages identical`.
 */
export function cliReport(results: ReadonlyMap<string, readonly CliComparison[]>, verbose = true): string[] {
  const lines: string[] = [];
  const all: CliComparison[] = [];
  for (const [name, comparisons] of results) {
    lines.push(cliSummaryLine(name, comparisons));
    if (verbose) {
      for (const c of comparisons.filter((c) => c.outcome !== "identical")) {
        lines.push(`  ${c.outcome}: ${c.id}${c.detail ? `: ${c.detail.replaceAll("\n", " ")}` : ""}`);
      }
    }
    all.push(...comparisons);
  }
  const identical = all.filter((c) => c.outcome === "identical").length;
  lines.push(`cli: ${identical}/${all.length} messages identical`);
  return lines;
}

/** Prints `cliReport`'s lines. */
export function printCliReport(results: ReadonlyMap<string, readonly CliComparison[]>, verbose = true): void {
  for (const line of cliReport(results, verbose)) console.log(line);
}
