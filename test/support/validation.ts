// Helpers for the validators' tests: run one semantic validator on a spec, and read Istio's
// CRD-validation corpus (tests only; the project never reads ../shared at run time).
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import type { ConfigObject, ObjectMeta, ValidationResult } from "../../src/config/model.ts";
import { DEFAULT_CONTEXT, Findings, type SemanticValidator } from "../../src/config/validation/findings.ts";

export interface ObjectOptions {
  kind?: string;
  apiVersion?: string;
  metadata?: ObjectMeta;
}

/** Runs `validator` on an object with `spec`; the object defaults to name `n` in namespace `ns`. */
export function runSemantic(validator: SemanticValidator, spec: unknown, opts: ObjectOptions = {}): ValidationResult {
  const obj: ConfigObject = {
    apiVersion: opts.apiVersion ?? "networking.istio.io/v1",
    kind: opts.kind ?? "Test",
    metadata: opts.metadata ?? { name: "n", namespace: "ns" },
    spec,
  };
  const out = new Findings("spec");
  validator(obj, DEFAULT_CONTEXT, out);
  return { errors: out.errors, warnings: out.warnings };
}

const CORPUS = new URL("../../../shared/conformance/istio/crd-validation/", import.meta.url);

/** The documents of a corpus file (`destinationrule-valid.yaml`), split on `---` lines, without `_err`. */
export function corpusDocuments(file: string): ConfigObject[] {
  const text = readFileSync(new URL(file, CORPUS), "utf8");
  return text
    .split(/^---.*$/m)
    .filter((part) => part.trim() !== "" && parse(part) !== null)
    .map((part) => {
      const doc = parse(part) as ConfigObject & { _err?: unknown };
      delete doc._err;
      return doc;
    });
}

/** Runs `validator` on a whole corpus document, as the webhook would. */
export function runOnDocument(validator: SemanticValidator, doc: ConfigObject): ValidationResult {
  const out = new Findings("spec");
  validator(doc, DEFAULT_CONTEXT, out);
  return { errors: out.errors, warnings: out.warnings };
}

/** Runs a check that reports on a Findings positioned at `spec`, and returns what it found. */
export function collect(check: (out: Findings) => void): ValidationResult {
  const out = new Findings("spec");
  check(out);
  return { errors: out.errors, warnings: out.warnings };
}

/** The messages of a list of issues, for tests that do not care about paths. */
export function messages(issues: { message: string }[]): string[] {
  return issues.map((i) => i.message);
}
