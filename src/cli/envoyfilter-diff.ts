// `sluice x envoyfilter diff -f PATH [-f PATH ...] [proxy options] [-o diff|json]`: what the
// EnvoyFilters among the files do to one proxy's generated config. The config is built twice, once
// without any EnvoyFilter and once with them all, and the clusters, listeners and route
// configurations that differ are shown as unified diffs of their YAML (or as JSON before/after
// pairs); patches that were refused are listed with their reason.
import type { CommandModule } from "yargs";
import { EXIT_INVALID, EXIT_OK } from "./exit-codes.ts";
import { filenameOption } from "./filename-option.ts";
import { groupCommand } from "./group-command.ts";
import {
  loadProxyMesh,
  loadProxyMeshNetworks,
  type ProxyArgs,
  proxySpecFromArgs,
  withProxyOptions,
} from "./translate.ts";

const OUTPUT_FORMATS = ["diff", "json"] as const;
const DIFF_TYPES = ["CDS", "LDS", "RDS"] as const;
const SECTION: Readonly<Record<(typeof DIFF_TYPES)[number], string>> = {
  CDS: "clusters",
  LDS: "listeners",
  RDS: "routes",
};

interface DiffArgs extends ProxyArgs {
  output: (typeof OUTPUT_FORMATS)[number];
  context: number;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One resource that the EnvoyFilters changed, added (no `before`) or removed (no `after`). */
export interface ResourceChange {
  /** `clusters`, `listeners` or `routes`. */
  section: string;
  name: string;
  before?: Json;
  after?: Json;
}

/** Resources by name, from a raw config dump's JSON (`{configs: [resource, ...]}`). */
function resourcesByName(dump: Json | undefined): Map<string, Json> {
  const configs = (dump as { configs?: Json[] } | null | undefined)?.configs ?? [];
  return new Map(configs.map((resource) => [String((resource as { name?: Json }).name ?? ""), resource]));
}

/** The resources of each section that differ between the two dumps, in the order the proxy gets them. */
export function changedResources(before: Record<string, Json>, after: Record<string, Json>): ResourceChange[] {
  const changes: ResourceChange[] = [];
  for (const section of Object.keys(after)) {
    const was = resourcesByName(before[section]);
    const is = resourcesByName(after[section]);
    for (const [name, resource] of is) {
      const old = was.get(name);
      if (old === undefined) changes.push({ section, name, after: resource });
      else if (JSON.stringify(old) !== JSON.stringify(resource))
        changes.push({ section, name, before: old, after: resource });
    }
    for (const [name, resource] of was) if (!is.has(name)) changes.push({ section, name, before: resource });
  }
  return changes;
}

/** The lines of `a` kept (" "), removed ("-") and of `b` added ("+"), by longest common subsequence. */
function editScript(a: readonly string[], b: readonly string[]): [" " | "-" | "+", string][] {
  // Common ends are trimmed first: patches usually change a small part of a large resource.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const n = endA - start;
  const m = endB - start;
  const lcs = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] =
        a[start + i] === b[start + j]
          ? lcs[(i + 1) * (m + 1) + j + 1] + 1
          : Math.max(lcs[(i + 1) * (m + 1) + j], lcs[i * (m + 1) + j + 1]);
    }
  }
  const script: [" " | "-" | "+", string][] = a.slice(0, start).map((line) => [" ", line]);
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[start + i] === b[start + j]) {
      script.push([" ", a[start + i]]);
      i++;
      j++;
    } else if (i < n && (j === m || lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1])) {
      // Removals before additions, as diff -u shows a changed line.
      script.push(["-", a[start + i]]);
      i++;
    } else {
      script.push(["+", b[start + j]]);
      j++;
    }
  }
  for (let k = endA; k < a.length; k++) script.push([" ", a[k]]);
  return script;
}

/** A unified diff of two texts with `context` lines around each change (`diff -u`'s hunks). */
export function unifiedDiff(before: string, after: string, labels: [string, string], context: number): string {
  const split = (text: string) => (text === "" ? [] : text.replace(/\n$/, "").split("\n"));
  const script = editScript(split(before), split(after));
  const changed = script.flatMap(([op], k) => (op === " " ? [] : [k]));
  if (changed.length === 0) return "";
  const out = [`--- ${labels[0]}`, `+++ ${labels[1]}`];
  let k = 0;
  while (k < changed.length) {
    const first = Math.max(0, changed[k] - context);
    let last = changed[k];
    while (k < changed.length && changed[k] - last <= 2 * context) last = changed[k++];
    const end = Math.min(script.length - 1, last + context);
    const lineNumber = (side: "-" | "+") =>
      script.slice(0, first).filter(([op]) => op !== (side === "-" ? "+" : "-")).length;
    const count = (side: "-" | "+") =>
      script.slice(first, end + 1).filter(([op]) => op !== (side === "-" ? "+" : "-")).length;
    const range = (side: "-" | "+") => {
      const n = count(side);
      return `${n === 0 ? lineNumber(side) : lineNumber(side) + 1},${n}`;
    };
    out.push(`@@ -${range("-")} +${range("+")} @@`);
    for (const [op, line] of script.slice(first, end + 1)) out.push(`${op}${line}`);
  }
  return `${out.join("\n")}\n`;
}

const envoyFilterDiffCommand: CommandModule<object, DiffArgs> = {
  command: "diff",
  describe: "Show what the EnvoyFilters among config files change in the config one proxy gets",
  builder: (yargs) =>
    withProxyOptions(yargs.option("filename", filenameOption("read")))
      .option("output", {
        alias: "o",
        choices: OUTPUT_FORMATS,
        default: "diff" as const,
        describe: "diff: unified diffs of each changed resource as YAML; json: before/after of each",
      })
      .option("context", { type: "number", default: 3, describe: "Lines of context around each change (diff output)" })
      .demandCommand(0, 0)
      .example(
        "$0 x envoyfilter diff -f filters.yaml -f config/ --namespace shop --labels app=reviews",
        "What the filters do to a sidecar's clusters, listeners and routes",
      )
      .epilogue(
        [
          "Builds the proxy's config from the files without any EnvoyFilter, then with all of them, and shows the",
          "clusters, listeners and route configurations that differ (routes: those the listeners name). Patches",
          "that were refused (undecodable, or producing config Envoy would reject) are listed on stderr.",
          "Exit status: 0 printed, 1 some input is invalid, 2 usage error.",
        ].join("\n"),
      ),
  handler: async (argv) => {
    const [{ loadState, translateProxy }, xds, { XdsCache }, { describePatchError, envoyFilterStatus }, { stringify }] =
      await Promise.all([
        import("./translate-state.ts"),
        import("../xds/index.ts"),
        import("../configgen/index.ts"),
        import("../networking/envoyfilter/index.ts"),
        import("yaml"),
      ]);
    const mesh = await loadProxyMesh(argv.meshConfig);
    if (!mesh) return;
    const meshNetworks = await loadProxyMeshNetworks(argv.meshNetworks);
    if (!meshNetworks) return;
    const isEnvoyFilter = (o: { kind?: string; apiVersion?: string }) =>
      o.kind === "EnvoyFilter" && (o.apiVersion ?? "").startsWith("networking.istio.io/");
    const without = loadState(argv.filename, mesh, argv.domain, isEnvoyFilter, [], meshNetworks);
    const withFilters = loadState(argv.filename, mesh, argv.domain, undefined, [], meshNetworks);
    const failed = withFilters.problems ?? without.problems;
    if (failed || !withFilters.state || !without.state) {
      for (const problem of failed ?? []) process.stderr.write(`Error: ${problem}\n`);
      process.exitCode = EXIT_INVALID;
      return;
    }
    for (const warning of withFilters.warnings) process.stderr.write(`Warning: ${warning}\n`);
    const proxy = translateProxy(proxySpecFromArgs(argv), mesh, argv.domain);
    const dumps = (state: NonNullable<typeof without.state>, cache = new XdsCache()) =>
      Object.fromEntries(
        DIFF_TYPES.map((type) => {
          const dump = xds.buildConfigDump(
            state.push,
            proxy,
            { endpoints: state.registry, secrets: xds.storeSecrets(state.store), cache },
            { types: [type], raw: true },
          );
          return [SECTION[type], xds.configDumpJson(dump) as Json];
        }),
      );
    const before = dumps(without.state);
    envoyFilterStatus.clear();
    const after = dumps(withFilters.state);
    const changes = changedResources(before, after);
    for (const e of envoyFilterStatus.recordedErrors()) process.stderr.write(`Warning: ${describePatchError(e)}\n`);
    if (argv.output === "json") {
      process.stdout.write(`${JSON.stringify(changes, null, 2)}\n`);
    } else {
      const yaml = (value: Json | undefined) => (value === undefined ? "" : stringify(value, { lineWidth: 0 }));
      for (const change of changes) {
        const label = `${change.section}/${change.name}`;
        process.stdout.write(
          unifiedDiff(
            yaml(change.before),
            yaml(change.after),
            [
              change.before === undefined ? "/dev/null" : `a/${label}`,
              change.after === undefined ? "/dev/null" : `b/${label}`,
            ],
            argv.context,
          ),
        );
      }
    }
    process.exitCode = EXIT_OK;
  },
};

export const envoyFilterCommand = groupCommand({
  command: "envoyfilter",
  describe: "EnvoyFilter tools",
  builder: (yargs) => yargs.command(envoyFilterDiffCommand),
});
