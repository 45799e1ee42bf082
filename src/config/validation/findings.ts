import type { ConfigObject, Issue, ValidationResult } from "../model.ts";

/** Context a validator may need beyond the object itself. */
export interface ValidationContext {
  /** The mesh's DNS domain suffix, used to expand short host names ("cluster.local"). */
  domain: string;
}

export const DEFAULT_CONTEXT: ValidationContext = { domain: "cluster.local" };

/**
 * Collects errors and warnings with their field paths while a validator walks an object.
 * `at("http", 0)` gives a child collector whose paths are prefixed ("spec.http[0].route").
 */
export class Findings implements ValidationResult {
  readonly errors: Issue[];
  readonly warnings: Issue[];
  readonly path: string;

  constructor(path = "spec", errors: Issue[] = [], warnings: Issue[] = []) {
    this.path = path;
    this.errors = errors;
    this.warnings = warnings;
  }

  /** A collector for a child field; `index` makes it a list element. Shares the parent's lists. */
  at(field: string, index?: number): Findings {
    const base = field === "" ? this.path : this.path === "" ? field : `${this.path}.${field}`;
    return new Findings(index === undefined ? base : `${base}[${index}]`, this.errors, this.warnings);
  }

  error(message: string): void {
    this.errors.push({ path: this.path, message });
  }

  warn(message: string): void {
    this.warnings.push({ path: this.path, message });
  }

  get ok(): boolean {
    return this.errors.length === 0;
  }
}

/**
 * Runs `check` on a scratch collector at `out`'s path, then adds its errors to `out` with `prefix`
 * in front, as Go's multierror.Prefix does ("<prefix> <message>"); warnings are added unchanged.
 */
export function withErrorPrefix(out: Findings, prefix: string, check: (scratch: Findings) => void): void {
  const scratch = new Findings(out.path);
  check(scratch);
  for (const issue of scratch.errors) out.errors.push({ path: issue.path, message: `${prefix} ${issue.message}` });
  out.warnings.push(...scratch.warnings);
}

/** A kind's semantic (webhook) validator. Returns errors and warnings; never throws on bad input. */
export type SemanticValidator = (obj: ConfigObject, ctx: ValidationContext, out: Findings) => void;
