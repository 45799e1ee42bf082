// The values `sluice install` renders from: manifests/values.yaml (the defaults, shipped in the
// package) with the user's files merged over it as Helm merges values files (maps key by key, lists and
// scalars replaced). A file may also be an IstioOperator, whose spec.values, spec.meshConfig and
// spec.revision are taken, as `istioctl install -f` takes them.
import { readFileSync } from "node:fs";
import { parse } from "yaml";

/** The defaults, beside the package's other manifests (src/install/ and dist/bundle/ are both two levels down). */
export const DEFAULT_VALUES_URL = new URL("../../manifests/values.yaml", import.meta.url);

export type ValueMap = { [key: string]: unknown };

const isMap = (value: unknown): value is ValueMap =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** `over` merged onto `base`: maps key by key, anything else replaced; neither input is changed. */
export function mergeValues(base: ValueMap, over: ValueMap): ValueMap {
  const out: ValueMap = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isMap(current) && isMap(value) ? mergeValues(current, value) : value;
  }
  return out;
}

/** One values file's text as values: Helm values, or an IstioOperator's. `source` names it in errors. */
export function parseValuesText(text: string, source: string): ValueMap {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new Error(`${source}: not YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (!isMap(doc))
    throw new Error(`${source}: values must be a map, not ${Array.isArray(doc) ? "a list" : typeof doc}`);
  if (doc.kind !== "IstioOperator") return doc;
  const spec = isMap(doc.spec) ? doc.spec : {};
  let values: ValueMap = isMap(spec.values) ? spec.values : {};
  if (isMap(spec.meshConfig)) values = mergeValues(values, { meshConfig: spec.meshConfig });
  if (typeof spec.revision === "string") values = { ...values, revision: spec.revision };
  return values;
}

/** The defaults with each file merged over them in order, then `sets` (`a.b.c=value`, as --set). */
export function loadValues(files: readonly string[], sets: readonly string[] = []): ValueMap {
  let values = parseValuesText(readFileSync(DEFAULT_VALUES_URL, "utf8"), "manifests/values.yaml");
  for (const file of files) values = mergeValues(values, parseValuesText(readFileSync(file, "utf8"), file));
  for (const set of sets) values = mergeValues(values, parseSet(set));
  return values;
}

/** `a.b.c=value` as {a: {b: {c: value}}}; the value is read as YAML (true, 3, [x]), as Helm's --set reads scalars. */
export function parseSet(set: string): ValueMap {
  const eq = set.indexOf("=");
  if (eq <= 0) throw new Error(`--set ${set}: expected path=value`);
  const path = set.slice(0, eq).split(".");
  if (path.some((part) => part === "")) throw new Error(`--set ${set}: empty name in the path`);
  let value: unknown = parse(set.slice(eq + 1));
  for (const part of path.reverse()) value = { [part]: value };
  return value as ValueMap;
}

/**
 * Typed reads of the merged values; a value of the wrong type is an error naming its path (values
 * are user input: a clear message beats a broken manifest).
 */
export class Values {
  constructor(readonly raw: ValueMap) {}

  private at(path: string): unknown {
    let node: unknown = this.raw;
    for (const part of path.split(".")) node = isMap(node) ? node[part] : undefined;
    return node;
  }

  string(path: string): string {
    const value = this.at(path);
    if (value === undefined || value === null) return "";
    if (typeof value === "string") return value;
    if (typeof value === "number" || typeof value === "boolean") return String(value);
    throw new Error(`values: ${path} must be a string, not ${describe(value)}`);
  }

  boolean(path: string): boolean {
    const value = this.at(path);
    if (value === undefined || value === null) return false;
    if (typeof value === "boolean") return value;
    if (value === "true" || value === "false") return value === "true";
    throw new Error(`values: ${path} must be true or false, not ${describe(value)}`);
  }

  integer(path: string): number {
    const value = this.at(path);
    const number = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
    if (typeof number === "number" && Number.isSafeInteger(number) && number >= 0) return number;
    throw new Error(`values: ${path} must be a whole number, not ${describe(value)}`);
  }

  map(path: string): ValueMap {
    const value = this.at(path);
    if (value === undefined || value === null) return {};
    if (isMap(value)) return value;
    throw new Error(`values: ${path} must be a map, not ${describe(value)}`);
  }

  list(path: string): unknown[] {
    const value = this.at(path);
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) return value;
    throw new Error(`values: ${path} must be a list, not ${describe(value)}`);
  }

  /** A map whose values are all strings (labels, annotations, env); numbers and booleans are written as text. */
  stringMap(path: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(this.map(path))) {
      if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
        out[key] = String(value);
      else throw new Error(`values: ${path}.${key} must be a string, not ${describe(value)}`);
    }
    return out;
  }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (isMap(value)) return "a map";
  return JSON.stringify(value);
}
