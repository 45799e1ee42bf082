// `sluice analyze [files...]`: Istio's config analyzers over config files (istioctl analyze
// --use-kube=false): messages as istioctl prints them, thresholds, suppressions, exit code 79 when
// messages reach the failure threshold. Flags and help only; the analyzers load when the command runs.
import type { CommandModule } from "yargs";
import { STDIN_PATH } from "../config/decode-paths.ts";
import { EXIT_ANALYZER_FOUND_ISSUES, EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";

const OUTPUT_CHOICES = ["log", "text", "json", "yaml"] as const;
const LEVEL_NAMES = ["Info", "Warning", "Error"] as const;
type LevelName = (typeof LEVEL_NAMES)[number];

interface AnalyzeArgs {
  files: string[];
  "all-namespaces": boolean;
  // Global flags (src/bin/sluice.ts); absent when the command runs without them, as in tests.
  namespace?: string;
  istioNamespace?: string;
  output: (typeof OUTPUT_CHOICES)[number];
  "failure-threshold": LevelName;
  "output-threshold": LevelName;
  "list-analyzers": boolean;
  analyzer: string[];
  meshConfigFile?: string;
  suppress: string[];
  "ignore-unknown": boolean;
  verbose: boolean;
  "use-kube": boolean;
  kubeconfig?: string;
  context?: string;
}

// A flag that may be given several times. Not `array: true`, which would also swallow the file arguments
// after it; repeating the flag still collects every value.
const repeatable = {
  type: "string",
  default: [] as string[],
  coerce: (value: string | string[]): string[] => [value].flat(),
} as const;

/** istioctl reads levels case-insensitively. */
function levelOption(defaultLevel: LevelName, describe: string) {
  return {
    type: "string",
    default: defaultLevel,
    describe: `${describe} One of ${LEVEL_NAMES.join(", ")}.`,
    coerce: (value: string): LevelName => {
      const level = LEVEL_NAMES.find((l) => l.toLowerCase() === String(value).toLowerCase());
      if (!level) throw new Error(`${value} is not a valid level; valid values: ${LEVEL_NAMES.join(", ")}`);
      return level;
    },
  } as const;
}

export const analyzeCommand: CommandModule<object, AnalyzeArgs> = {
  command: "analyze [files..]",
  describe: "Analyze Istio configuration files and print validation messages",
  builder: (yargs) =>
    yargs
      .positional("files", {
        type: "string",
        array: true,
        default: [] as string[],
        describe: `Files or directories (every .yaml, .yml, .json below) to analyze; "${STDIN_PATH}" reads standard input`,
      })
      .option("all-namespaces", { alias: "A", type: "boolean", default: false, describe: "Analyze all namespaces" })
      .option("output", {
        alias: "o",
        choices: OUTPUT_CHOICES,
        default: "log" as const,
        describe: 'Output format ("text" is "log")',
      })
      .option(
        "failure-threshold",
        levelOption("Error", "The severity level of analysis at which to set a non-zero exit code."),
      )
      .option("output-threshold", levelOption("Info", "The severity level of analysis at which to display messages."))
      .option("list-analyzers", {
        alias: "L",
        type: "boolean",
        default: false,
        describe: "List the analyzers available to run. Suppresses normal execution.",
      })
      .option("analyzer", {
        ...repeatable,
        describe: "Run only these analyzers (repeatable; all of them when none matches)",
      })
      .option("meshConfigFile", { type: "string", describe: "Overrides the mesh config values to use for analysis." })
      .option("suppress", {
        alias: "S",
        ...repeatable,
        describe:
          'Suppress a message code on a resource: "<code>=<Kind> <namespace>/<name>" ("*" matches any text). Repeatable.',
      })
      .option("verbose", { alias: "v", type: "boolean", default: false, describe: "Print which analyzers ran" })
      .option("ignore-unknown", {
        type: "boolean",
        default: false,
        describe: "Don't fail on documents that cannot be parsed",
      })
      .option("use-kube", {
        alias: "k",
        type: "boolean",
        default: false,
        describe:
          "Analyze the live cluster too (files given override its Istio objects); off by default, unlike istioctl",
      })
      .example("$0 analyze -k", "Analyze the current cluster (namespace default)")
      .example("$0 analyze a.yaml b.yaml my-app-config/", "Analyze files and directories (namespace default)")
      .example("$0 analyze -A -o json manifests/", "Analyze every namespace, JSON output")
      .example(
        '$0 analyze -S "IST0103=Pod testing/*" app.yaml',
        "Suppress PodMissingProxy for the pods of namespace testing",
      )
      .example("$0 analyze -L", "List the analyzers")
      .epilogue(
        [
          "Messages go to standard output, one per line in log format:",
          '  Error [IST0101] (VirtualService ns/name file.yaml:12) Referenced host not found: "x"',
          'Objects without a namespace are analyzed in the selected namespace (-n, default "default"); with -A',
          "messages about every namespace are printed. Without --use-kube only files are analyzed (istioctl's",
          "--use-kube=false). As istioctl, Services, Namespaces, Nodes, Pods and Secrets are never read from files,",
          "so without a cluster the analyzers that need them are skipped (-v lists them); with --use-kube the",
          "cluster's objects, mesh config and mesh networks (ConfigMap istio in the Istio namespace) are read.",
          "",
          `Exit status: ${EXIT_OK} no message reached --failure-threshold, ${EXIT_ANALYZER_FOUND_ISSUES} some did (log output only, as`,
          `istioctl), ${EXIT_INVALID} a document could not be parsed (unless --ignore-unknown), ${EXIT_USAGE} usage error.`,
        ].join("\n"),
      ),
  handler: async (argv) => {
    const { runAnalyzeCommand, kubeClient } = await import("./analyze-run.ts");
    process.exitCode = await runAnalyzeCommand({
      files: argv.files,
      allNamespaces: argv["all-namespaces"],
      namespace: argv.namespace,
      istioNamespace: argv.istioNamespace ?? "istio-system",
      output: argv.output === "text" ? "log" : argv.output,
      failureThreshold: argv["failure-threshold"],
      outputThreshold: argv["output-threshold"],
      listAnalyzers: argv["list-analyzers"],
      analyzers: argv.analyzer,
      meshConfigFile: argv.meshConfigFile,
      suppress: argv.suppress,
      ignoreUnknown: argv["ignore-unknown"],
      verbose: argv.verbose,
      cluster: argv["use-kube"] ? kubeClient(argv.kubeconfig, argv.context) : undefined,
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
    });
  },
};
