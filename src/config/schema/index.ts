// Structural validation: each kind's OpenAPI v3 schema (from its CRD, see scripts/gen-schemas.ts) and its CEL
// rules, applied as the Kubernetes API server applies them on create. Kubernetes built-in kinds have no CRD,
// and kinds whose CRD Sluice is not generated from no schema (KindInfo.hasSchema): Sluice checks only their
// metadata (validate.ts), never their bodies.
import { readFileSync } from "node:fs";
import type { KindInfo } from "../kinds.ts";
import { parseApiVersion } from "../kinds.ts";
import type { ConfigObject } from "../model.ts";
import type { Findings } from "../validation/findings.ts";
import { applyDefaults, validateValue } from "./structural.ts";
import { type GeneratedSchemas, type Schema, schemaFileName } from "./types.ts";

const loaded = new Map<string, GeneratedSchemas>();

/** The schema of a kind at a version, read from the generated files on first use. */
export function schemaFor(info: KindInfo, version: string): Schema | undefined {
  const file = schemaFileName(info);
  let generated = loaded.get(file);
  if (!generated) {
    generated = JSON.parse(readFileSync(new URL(`./generated/${file}`, import.meta.url), "utf8")) as GeneratedSchemas;
    loaded.set(file, generated);
  }
  const index = generated.versions[version] ?? generated.versions[info.preferredVersion];
  return generated.schemas[index];
}

/**
 * Checks `obj` against its kind's schema: defaults first (on a copy), then types, required fields, enums,
 * formats, patterns, bounds, oneOf/anyOf/not, list uniqueness, unknown fields and CEL rules. `status` and
 * `metadata` are not checked here, nor unknown top-level fields (validate.ts reports those).
 */
export function validateStructure(obj: ConfigObject, info: KindInfo, out: Findings): void {
  if (!info.hasSchema) return;
  const schema = schemaFor(info, parseApiVersion(obj.apiVersion).version);
  if (!schema?.properties) return;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    if (key !== "metadata" && obj[key] !== undefined) copy[key] = structuredClone(obj[key]);
  }
  applyDefaults(copy, schema);
  validateValue(copy, schema, "", out);
}
