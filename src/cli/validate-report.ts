// What `sluice validate` reports about each document, and its text and JSON renderings.
import type { DecodedDocument } from "../config/index.ts";
import {
  type ConfigObject,
  emptyResult,
  Findings,
  type Issue,
  KINDS,
  lookupKind,
  parseApiVersion,
  STDIN_PATH,
  type ValidationResult,
  validateObject,
} from "../config/index.ts";
import { DEFAULT_NAMESPACE } from "./validate-namespaces.ts";
import { workloadCheck } from "./validate-workloads.ts";

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
  const result = validateOrSkip(obj, doc.object);
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

/**
 * The validation path for Istio, Gateway API and the Kubernetes kinds Sluice knows, plus istioctl's
 * workload checks (on the object as written: its namespace, not the default one). Other kinds are
 * not validated, and, as istioctl, nothing is said about them.
 */
function validateOrSkip(obj: ConfigObject, written: ConfigObject): ValidationResult {
  const extraCheck = workloadCheck(written);
  const known =
    lookupKind(obj.apiVersion, obj.kind) !== undefined || MESH_GROUPS.has(parseApiVersion(obj.apiVersion).group);
  const result = known ? validateObject(obj) : emptyResult();
  extraCheck?.(written, new Findings("", result.errors, result.warnings));
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
