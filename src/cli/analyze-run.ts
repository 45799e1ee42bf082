// The work of `sluice analyze` (see analyze.ts for its flags): read files, run the analyzers, print
// the messages and the summary lines istioctl prints, and pick the exit code.
import { readFileSync, statSync } from "node:fs";
import { extname } from "node:path";
import {
  ALL_ANALYZERS,
  type AnalysisInput,
  type ClusterConfig,
  CONFIG_ANALYSIS_URL,
  chunkLines,
  FILE_EXCLUDED_KINDS,
  formatMessages,
  isWorseThanOrEqualTo,
  type Level,
  MESSAGES,
  type Message,
  type OutputFormat,
  readCluster,
  resourceKind,
  runAnalysis,
  selectAnalyzers,
  skippedAnalyzers,
} from "../analysis/index.ts";
import {
  configFiles,
  decodeConfigText,
  loadMeshConfig,
  loadMeshNetworks,
  type MeshConfig,
  STDIN_PATH,
} from "../config/index.ts";
import { ISTIOCTL_USER_AGENT, KubeApiError, KubeClient } from "../sources/kube/client.ts";
import { EXIT_ANALYZER_FOUND_ISSUES, EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";
import { loadCliKubeConfig } from "./kube-access.ts";
import { cliLog } from "./log.ts";

const DEFAULT_NAMESPACE = "default";
// The file extensions istioctl reads, in its order (case-sensitive, as it compares them).
const ISTIOCTL_EXTENSIONS = [".json", ".yaml", ".yml"];
// Istio's galley.istio.io/analyze-suppress annotation: comma-separated codes, or "*".
const SUPPRESS_ANNOTATION = "galley.istio.io/analyze-suppress";

export interface AnalyzeOptions {
  files: string[];
  allNamespaces: boolean;
  namespace?: string;
  istioNamespace: string;
  output: OutputFormat;
  failureThreshold: Level;
  outputThreshold: Level;
  listAnalyzers: boolean;
  analyzers: string[];
  meshConfigFile?: string;
  suppress: string[];
  ignoreUnknown: boolean;
  verbose?: boolean;
  /** Analyze this cluster's objects too (istioctl's --use-kube); files override its objects. */
  cluster?: KubeClient;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The flags' defaults (istioctl analyze's): files none, every analyzer, log output, failing on errors. */
export const ANALYZE_DEFAULTS: Omit<AnalyzeOptions, "istioNamespace" | "stdout" | "stderr"> = {
  files: [],
  allNamespaces: false,
  output: "log",
  failureThreshold: "Error",
  outputThreshold: "Info",
  listAnalyzers: false,
  analyzers: [],
  suppress: [],
  ignoreUnknown: false,
};

/** Runs the command; returns the exit code. */
export async function runAnalyzeCommand(options: AnalyzeOptions): Promise<number> {
  if (options.listAnalyzers) {
    options.stdout(listAnalyzers());
    return EXIT_OK;
  }
  if (options.files.length === 0 && !options.cluster) {
    options.stderr("Error: name the files to analyze, or analyze a cluster with --use-kube\n");
    return EXIT_USAGE;
  }
  const suppressions = parseSuppressions(options.suppress, options.stderr);
  if (typeof suppressions === "string") {
    options.stderr(`Error: ${suppressions}\n`);
    return EXIT_USAGE;
  }
  const namespace = options.allNamespaces ? "" : options.namespace || DEFAULT_NAMESPACE;
  const target = options.allNamespaces ? "all namespaces" : `namespace: ${namespace}`;

  const selected = selectAnalyzers(options.analyzers);
  // As istioctl: files never provide Services, Namespaces, Nodes, Pods or Secrets, so without a
  // cluster the analyzers that read them are skipped.
  const skipped = options.cluster ? [] : skippedAnalyzers(selected, FILE_EXCLUDED_KINDS);
  const analyzers = selected.filter((a) => !skipped.includes(a));
  const inputs: AnalysisInput[] = [];
  let cluster: ClusterConfig | undefined;
  if (options.cluster) {
    if (namespace !== "" && !(await namespaceExists(options.cluster, namespace))) {
      options.stderr(`namespace "${namespace}" not found\n`);
      return EXIT_OK;
    }
    const kinds = new Set(analyzers.flatMap((a) => a.inputs));
    cluster = await readCluster(options.cluster, kinds, options.istioNamespace, cliLog("kube"));
    for (const object of cluster.objects) inputs.push({ object });
  }

  const files = options.files.flatMap((path) => {
    if (path === STDIN_PATH || statSync(path).isDirectory()) return configFiles(path);
    if (ISTIOCTL_EXTENSIONS.includes(extname(path))) return [path];
    options.stderr(`Skipping file ${path}, recognized file extensions are: [${ISTIOCTL_EXTENSIONS.join(" ")}]\n`);
    return [];
  });
  const parseErrors: string[] = [];
  for (const file of files) {
    const text = readFileSync(file === STDIN_PATH ? 0 : file, "utf8");
    cliLog("default").debug({ file }, "read config file");
    const docs = decodeConfigText(text, file);
    const chunks = chunkLines(text);
    const chunkOf = (line: number) => chunks.find((c) => c.startLine <= line && line <= c.endLine);
    for (const doc of docs) {
      if (!doc.object) {
        parseErrors.push(`${file}:${doc.position.line}: ${doc.error}`);
        continue;
      }
      if (FILE_EXCLUDED_KINDS.has(resourceKind(doc.object))) continue;
      // istioctl's lines: where the document's chunk starts, and each field's; the items of a List
      // (several objects in one chunk) keep their own line.
      const chunk = chunkOf(doc.position.line);
      const alone = chunk !== undefined && docs.filter((d) => chunkOf(d.position.line) === chunk).length === 1;
      const origin = alone
        ? { file, line: chunk.startLine, fieldLines: chunk.fields }
        : { file, line: doc.position.line };
      inputs.push({ object: doc.object, origin });
    }
  }
  if (parseErrors.length > 0) options.stderr(`Error(s) adding files: ${parseErrors.join("\n")}\n`);

  const all = runAnalysis(inputs, {
    analyzers,
    mesh: effectiveMesh(options, cluster),
    meshNetworks: cluster?.meshNetworks ? loadMeshNetworks(cluster.meshNetworks) : undefined,
    namespace,
    defaultNamespace: namespace,
    istioNamespace: options.istioNamespace,
    // Without a cluster istioctl adds a default ingress gateway Pod and Service, through its file
    // source, which drops them (FILE_EXCLUDED_KINDS).
    defaultResources: false,
  }).filter((m) => !isSuppressed(m, suppressions));
  if (options.verbose) {
    // istioctl lists every selected analyzer as executed, the skipped ones too.
    const list = (as: readonly { name: string }[]) => as.map((a) => `\t ${a.name}\n`).join("");
    const skippedList = skipped.length > 0 ? `Skipped analyzers:\n${list(skipped)}` : "";
    options.stderr(`Analyzed resources in ${target}\n${skippedList}Executed analyzers:\n${list(selected)}\n`);
  }
  const shown = all.filter((m) => isWorseThanOrEqualTo(m.type.level, options.outputThreshold));
  options.stdout(`${formatMessages(shown, options.output)}\n`);

  if (shown.length === 0) {
    if (parseErrors.length > 0) {
      const noun = parseErrors.length === 1 ? "file" : "files";
      options.stderr(
        `No validation issues found when analyzing ${target} (but ${parseErrors.length} ${noun} could not be parsed).\n`,
      );
    } else if (files.length === 0) {
      options.stderr(`\u2714 No validation issues found when analyzing ${target}.\n`);
    } else if (files.length > 1) {
      options.stderr(`\u2714 No validation issues found when analyzing:\n  - ${files.join("\n  - ")}\n`);
    } else {
      options.stderr(`\u2714 No validation issues found when analyzing ${files[0]}.\n`);
    }
  }
  // As istioctl: the exit code follows the unfiltered messages, and only in log format.
  if (options.output !== "log") return EXIT_OK;
  if (all.some((m) => isWorseThanOrEqualTo(m.type.level, options.failureThreshold))) {
    options.stderr(
      `Error: Analyzers found issues when analyzing ${target}.\nSee ${CONFIG_ANALYSIS_URL} for more information about causes and resolutions.\n`,
    );
    return EXIT_ANALYZER_FOUND_ISSUES;
  }
  return parseErrors.length > 0 && !options.ignoreUnknown ? EXIT_INVALID : EXIT_OK;
}

/**
 * --meshConfigFile wins over the cluster's mesh config; without either, Istio's defaults. As istioctl,
 * a mesh config that cannot be read or is invalid is not used (the next one is) and the analysis goes
 * on; istioctl says nothing, Sluice says why on standard error.
 */
function effectiveMesh(options: AnalyzeOptions, cluster: ClusterConfig | undefined): MeshConfig {
  const sources: [string, () => string | undefined][] = [];
  const file = options.meshConfigFile;
  if (file) sources.push([`--meshConfigFile ${file}`, () => readFileSync(file, "utf8")]);
  if (cluster?.meshConfig !== undefined) {
    sources.push([`the mesh config in ConfigMap ${options.istioNamespace}/istio`, () => cluster.meshConfig]);
  }
  for (const [name, read] of sources) {
    try {
      return loadMeshConfig(read()).mesh;
    } catch (err) {
      options.stderr(`Warning: ${name} is not used: ${(err as Error).message}\n`);
    }
  }
  return loadMeshConfig().mesh;
}

/** A client for the kubeconfig's cluster (default: $KUBECONFIG or ~/.kube/config), in `context` if given. */
export function kubeClient(kubeconfigPath?: string, context?: string): KubeClient {
  return new KubeClient(loadCliKubeConfig(kubeconfigPath, context), { userAgent: ISTIOCTL_USER_AGENT });
}

async function namespaceExists(client: KubeClient, namespace: string): Promise<boolean> {
  try {
    await client.request("GET", `/api/v1/namespaces/${encodeURIComponent(namespace)}`);
    return true;
  } catch (err) {
    if (err instanceof KubeApiError && err.code === 404) return false;
    throw err;
  }
}

/** istioctl analyze -L: "* <name>:" and its description, sorted by name. */
function listAnalyzers(): string {
  return [...ALL_ANALYZERS]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((a) => `* ${a.name}:\n${a.description ? `    ${a.description}\n` : ""}`)
    .join("");
}

interface Suppression {
  code: string;
  resource: RegExp;
}

function parseSuppressions(values: string[], warn: (text: string) => void): Suppression[] | string {
  const known = new Set<string>(Object.values(MESSAGES).map((t) => t.code));
  const out: Suppression[] = [];
  for (const value of values) {
    const parts = value.split("=");
    if (parts.length !== 2) return `${value} is not a valid suppression value. See sluice analyze --help`;
    const [code, resource] = parts;
    if (!known.has(code)) {
      warn(`Warning: Supplied message code '${code}' is an unknown message code and will not have any effect.\n`);
    }
    out.push({ code, resource: globPattern(resource) });
  }
  return out;
}

/** A glob where "*" matches any text, matched against the whole resource name. */
function globPattern(glob: string): RegExp {
  const escaped = glob.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${escaped.join(".*")}$`);
}

function isSuppressed(m: Message, suppressions: readonly Suppression[]): boolean {
  if (!m.resource) return false;
  const annotated = m.resource.object.metadata?.annotations?.[SUPPRESS_ANNOTATION];
  if (annotated?.split(",").some((code) => code === "*" || code === m.type.code)) return true;
  return suppressions.some((s) => s.code === m.type.code && s.resource.test(m.resource?.friendlyName ?? ""));
}
