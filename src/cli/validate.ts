// `sluice validate -f PATH`: offline validation of config files with the same checks as the
// validation webhook (istioctl validate). Every document is checked, even after a broken one.
import { existsSync } from "node:fs";
import type { CommandModule } from "yargs";
import { type DecodedDocument, readConfigPaths, STDIN_PATH } from "../config/decode.ts";
import {
  type ConfigObject,
  emptyResult,
  Findings,
  type Issue,
  KINDS,
  lookupKind,
  parseApiVersion,
  type ValidationResult,
  validateObject,
} from "../config/index.ts";
import { EXIT_INVALID, EXIT_OK } from "./exit-codes.ts";
import { ISTIO_SYSTEM_NAMESPACE, workloadCheck } from "./validate-workloads.ts";

/** Namespace of a namespaced object that names none, as istioctl and kubectl assume. */
export const DEFAULT_NAMESPACE = "default";

const OUTPUT_FORMATS = ["text", "json"] as const;
type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** What `validate` found about one document; also the element of the `-o json` array. */
export interface DocumentReport {
  file: string;
  /** 0-based index of the document in its file (List items count one each). */
  index: number;
  line: number;
  apiVersion: string | null;
  kind: string | null;
  namespace: string | null;
  name: string | null;
  valid: boolean;
  /** Each "<field path>: <message>", or just the message when it concerns the whole object. */
  errors: string[];
  warnings: string[];
}

interface ValidateArgs {
  filename: string[];
  output: OutputFormat;
}

export const validateCommand: CommandModule<object, ValidateArgs> = {
  command: "validate",
  aliases: ["v"],
  describe: "Validate config files offline, with the checks of the validation webhook",
  builder: (yargs) =>
    yargs
      .option("filename", {
        alias: "f",
        // Not `array: true`: yargs would not take "-" (stdin) as an array element. Repeating the flag
        // still collects every value; coerce makes a single one a list too.
        type: "string",
        coerce: (value: string | string[]): string[] => [value].flat(),
        requiresArg: true,
        demandOption: "Name the files to validate with -f/--filename.",
        describe: `File or directory to validate (directories: every .yaml, .yml, .json below, recursively; "${STDIN_PATH}": standard input). Repeatable.`,
      })
      .option("output", {
        alias: "o",
        choices: OUTPUT_FORMATS,
        default: "text" as OutputFormat,
        describe: "Output format",
      })
      .check((argv) => {
        const missing = argv.filename.filter((path) => path !== STDIN_PATH && !existsSync(path));
        if (missing.length > 0) throw new Error(`no such file or directory: ${missing.join(", ")}`);
        return true;
      })
      .demandCommand(0, 0)
      .example("$0 validate -f bookinfo-gateway.yaml", "Validate one file")
      .example("$0 validate -f manifests/ -o json", "Validate a directory and print a JSON report")
      .epilogue(
        [
          "Exit status: 0 every document is valid, 1 some document is invalid (a document that cannot be read counts),",
          "2 usage error.",
          "",
          "Text output: one line per invalid document and per document with warnings,",
          "  Error: <Kind> <namespace>/<name> (<file>:<line>): <field path>: <message>; <field path>: <message>",
          "  Warning: <Kind> <namespace>/<name> (<file>:<line>): ...",
          "  Error: <file>:<line>: <message>            (a document that cannot be decoded)",
          'then "<path>" is valid for each path, or a count of invalid documents.',
          "",
          "JSON output (-o json): an array with one object per document:",
          "  {file, index, line, apiVersion, kind, namespace, name, valid, errors, warnings}",
          '  errors and warnings are strings "<field path>: <message>" (just the message when the path is empty);',
          "  apiVersion, kind, namespace and name are null when the document could not be decoded.",
          "",
          `Objects without metadata.namespace are validated in namespace "${DEFAULT_NAMESPACE}". As istioctl, Service`,
          "ports must name their protocol (name prefix or appProtocol), and Deployments without the canonical service",
          `labels get a warning (not in ${ISTIO_SYSTEM_NAMESPACE}). Other kinds outside the Istio and Gateway API groups`,
          "that Sluice does not know are not validated (a warning says so).",
        ].join("\n"),
      ),
  handler: (argv) => {
    const reports = readConfigPaths(argv.filename).map(validateDocument);
    process.stdout.write(argv.output === "json" ? formatJson(reports) : formatText(reports, argv.filename));
    process.exitCode = reports.every((r) => r.valid) ? EXIT_OK : EXIT_INVALID;
  },
};

// API groups whose every kind Sluice knows: an unknown kind there is a mistake, not a foreign object.
const MESH_GROUPS = new Set(KINDS.filter((k) => k.family !== "kubernetes").map((k) => k.group));

export function validateDocument(doc: DecodedDocument): DocumentReport {
  const { file, index, line } = doc.position;
  const base = { file, index, line };
  if (!doc.object) {
    const error = doc.error ?? "no object";
    return {
      ...base,
      apiVersion: null,
      kind: null,
      namespace: null,
      name: null,
      valid: false,
      errors: [error],
      warnings: [],
    };
  }
  const obj = withDefaultNamespace(doc.object);
  const result = validateOrSkip(obj);
  return {
    ...base,
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    namespace: metadataString(obj.metadata.namespace),
    name: metadataString(obj.metadata.name),
    valid: result.errors.length === 0,
    errors: result.errors.map(formatIssue),
    warnings: result.warnings.map(formatIssue),
  };
}

function validateOrSkip(obj: ConfigObject): ValidationResult {
  const extraCheck = workloadCheck(obj);
  const known = lookupKind(obj.apiVersion, obj.kind) || MESH_GROUPS.has(parseApiVersion(obj.apiVersion).group);
  if (!known && !extraCheck) {
    return {
      errors: [],
      warnings: [{ path: "", message: `not validated: Sluice does not know ${obj.apiVersion} ${obj.kind}` }],
    };
  }
  const result = known ? validateObject(obj) : emptyResult();
  extraCheck?.(obj, new Findings("", result.errors, result.warnings));
  return result;
}

function withDefaultNamespace(obj: ConfigObject): ConfigObject {
  const clusterScoped = lookupKind(obj.apiVersion, obj.kind)?.namespaced === false;
  if (clusterScoped || obj.metadata.namespace !== undefined) return obj;
  return { ...obj, metadata: { ...obj.metadata, namespace: DEFAULT_NAMESPACE } };
}

function metadataString(value: unknown): string | null {
  return value === undefined || value === null ? null : String(value);
}

function formatIssue(issue: Issue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

function describeDocument(report: DocumentReport): string {
  const where = `${report.file}:${report.line}`;
  if (report.kind === null) return where;
  const ref = report.namespace ? `${report.namespace}/${report.name ?? ""}` : (report.name ?? "");
  return `${report.kind} ${ref} (${where})`;
}

export function formatText(reports: DocumentReport[], paths: string[]): string {
  const lines: string[] = [];
  for (const report of reports) {
    if (report.errors.length > 0) lines.push(`Error: ${describeDocument(report)}: ${report.errors.join("; ")}`);
    if (report.warnings.length > 0) lines.push(`Warning: ${describeDocument(report)}: ${report.warnings.join("; ")}`);
  }
  const invalid = reports.filter((r) => !r.valid).length;
  if (invalid > 0) {
    lines.push(`validation failed: ${invalid} of ${reports.length} documents invalid`);
  } else {
    // istioctl's summary: one line per path given.
    for (const path of paths)
      lines.push(path === STDIN_PATH ? "validation succeed" : `${JSON.stringify(path)} is valid`);
  }
  return `${lines.join("\n")}\n`;
}

export function formatJson(reports: DocumentReport[]): string {
  return `${JSON.stringify(reports, null, 2)}\n`;
}
