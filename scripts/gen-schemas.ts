// Generates, from the Istio and Gateway API CRDs, the validation schemas in src/config/schema/generated/
// and the spec types in src/config/types/{istio,gateway-api}/. Run by hand when the CRDs change:
//   node --import tsx scripts/gen-schemas.ts [crd-dir]   (default: ../shared/crds)
// Output is committed. Descriptions and other documentation text are dropped: only what validation needs is
// kept. Kubernetes built-in kinds have no CRD; their types come from @kubernetes/client-node.

import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { KINDS, type KindInfo } from "../src/config/kinds.ts";
import { type GeneratedSchemas, type Schema, schemaFileName } from "../src/config/schema/types.ts";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const crdDir = process.argv[2] ?? join(repo, "../shared/crds");
const schemaDir = join(repo, "src/config/schema/generated");
const typesDir = join(repo, "src/config/types");

// Schema keywords that validation uses; everything else (description, example, x-kubernetes-map-type, which
// only steers server-side apply, ...) is dropped.
const KEPT_KEYWORDS = new Set([
  "type",
  "format",
  "nullable",
  "required",
  "enum",
  "default",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "x-kubernetes-int-or-string",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-validations",
]);

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema: { openAPIV3Schema: Record<string, unknown> };
}
interface Crd {
  kind: string;
  spec: { group: string; names: { kind: string; plural: string }; versions: CrdVersion[] };
}

function readCrds(): Map<string, Crd> {
  const byKey = new Map<string, Crd>();
  for (const file of readdirSync(crdDir).filter((f) => f.endsWith(".yaml"))) {
    for (const doc of parseAllDocuments(readFileSync(join(crdDir, file), "utf8"))) {
      const crd = doc.toJS() as Crd | null;
      if (crd?.kind === "CustomResourceDefinition") byKey.set(`${crd.spec.group}/${crd.spec.names.kind}`, crd);
    }
  }
  return byKey;
}

/** A copy of a CRD schema node with only the validation keywords. */
function strip(node: Record<string, unknown>): Schema {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (KEPT_KEYWORDS.has(key)) out[key] = value;
    else if (key === "properties") {
      const props = value as Record<string, Record<string, unknown>>;
      out.properties = Object.fromEntries(Object.entries(props).map(([name, sub]) => [name, strip(sub)]));
    } else if (key === "items" || key === "not") out[key] = strip(value as Record<string, unknown>);
    else if (key === "additionalProperties")
      out[key] = typeof value === "boolean" ? value : strip(value as Record<string, unknown>);
    else if (key === "oneOf" || key === "anyOf" || key === "allOf")
      out[key] = (value as Record<string, unknown>[]).map(strip);
  }
  return out as Schema;
}

/** The object schema without status, which Sluice never validates. */
function objectSchema(version: CrdVersion): Schema {
  const schema = strip(version.schema.openAPIV3Schema);
  delete schema.properties?.status;
  return schema;
}

function schemasFor(info: KindInfo, crd: Crd): GeneratedSchemas {
  const storage = crd.spec.versions.find((v) => v.storage) ?? crd.spec.versions[0];
  const out: GeneratedSchemas = { versions: {}, schemas: [] };
  const seen = new Map<string, number>();
  for (const version of info.versions) {
    // A version Sluice accepts but this CRD no longer serves validates against the storage version.
    const crdVersion = crd.spec.versions.find((v) => v.name === version && v.served) ?? storage;
    const schema = objectSchema(crdVersion);
    const text = JSON.stringify(schema);
    let index = seen.get(text);
    if (index === undefined) {
      index = out.schemas.push(schema) - 1;
      seen.set(text, index);
    }
    out.versions[version] = index;
  }
  return out;
}

// ---- TypeScript types ----

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function pascal(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join("");
}

/**
 * Emits one kind's spec interfaces. Each object schema gets one interface, named after the shortest path
 * that leads to it ("VirtualServiceHttpMatch"), and identical schemas at different paths share it.
 */
class TypeWriter {
  private readonly nameBySchema = new Map<string, string>();
  private readonly declared = new Set<string>();
  private readonly declarations: string[] = [];

  constructor(private readonly kind: string) {}

  write(spec: Schema): string {
    this.collectNames(spec, this.kind);
    this.nameBySchema.set(JSON.stringify(spec), `${this.kind}Spec`);
    this.typeOf(spec);
    const header = [
      `// Generated by scripts/gen-schemas.ts from the ${this.kind} CRD. Do not edit.`,
      `import type { ConfigObject } from "../../model.ts";`,
      `export type ${this.kind} = ConfigObject<${this.kind}Spec>;`,
    ];
    return `${header.join("\n\n")}\n\n${this.declarations.join("\n\n")}\n`;
  }

  private collectNames(schema: Schema, path: string): void {
    if (schema.properties) {
      const key = JSON.stringify(schema);
      const known = this.nameBySchema.get(key);
      if (known === undefined || path.length < known.length) this.nameBySchema.set(key, path);
      for (const [prop, sub] of Object.entries(schema.properties)) this.collectNames(sub, path + pascal(prop));
    }
    if (schema.items) this.collectNames(schema.items, path);
    if (typeof schema.additionalProperties === "object") this.collectNames(schema.additionalProperties, `${path}Value`);
  }

  private typeOf(schema: Schema): string {
    const type = this.baseType(schema);
    return schema.nullable ? `${type} | null` : type;
  }

  private baseType(schema: Schema): string {
    if (schema["x-kubernetes-int-or-string"]) return "number | string";
    if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
    switch (schema.type) {
      case "string":
        return "string";
      case "integer":
      case "number":
        return "number";
      case "boolean":
        return "boolean";
      case "array": {
        const item = schema.items ? this.typeOf(schema.items) : "unknown";
        return /[ |]/.test(item) ? `(${item})[]` : `${item}[]`;
      }
      case "object":
        if (schema.properties) return this.declare(schema);
        if (typeof schema.additionalProperties === "object")
          return `Record<string, ${this.typeOf(schema.additionalProperties)}>`;
        return "Record<string, unknown>";
      default:
        return "unknown";
    }
  }

  /** Declares the interface for an object schema once; returns its name. */
  private declare(schema: Schema): string {
    const name = this.nameBySchema.get(JSON.stringify(schema)) ?? "";
    if (this.declared.has(name)) return name;
    this.declared.add(name);
    const required = new Set(schema.required ?? []);
    const fields = Object.entries(schema.properties ?? {}).map(([prop, sub]) => {
      const key = IDENTIFIER.test(prop) ? prop : JSON.stringify(prop);
      return `  ${key}${required.has(prop) ? "" : "?"}: ${this.typeOf(sub)};`;
    });
    this.declarations.push(`export interface ${name} {\n${fields.join("\n")}\n}`);
    return name;
  }
}

function typesFileName(info: KindInfo): string {
  return `${info.kind.toLowerCase()}.gen.ts`;
}

function main(): void {
  const crds = readCrds();
  rmSync(schemaDir, { recursive: true, force: true });
  mkdirSync(schemaDir, { recursive: true });
  const typeFiles = new Map<string, string[]>([
    ["istio", []],
    ["gateway-api", []],
  ]);
  for (const info of KINDS) {
    if (info.family === "kubernetes") continue;
    const crd = crds.get(`${info.group}/${info.kind}`);
    if (!crd) throw new Error(`no CRD for ${info.group}/${info.kind} in ${crdDir}`);
    const generated = schemasFor(info, crd);
    writeFileSync(join(schemaDir, schemaFileName(info)), JSON.stringify(generated));

    const spec = generated.schemas[generated.versions[info.preferredVersion]].properties?.spec ?? {};
    const familyDir = join(typesDir, info.family);
    mkdirSync(familyDir, { recursive: true });
    writeFileSync(join(familyDir, typesFileName(info)), new TypeWriter(info.kind).write(spec));
    typeFiles.get(info.family)?.push(typesFileName(info));
  }
  for (const [family, files] of typeFiles) {
    const lines = files.sort().map((file) => `export type * from "./${file}";`);
    writeFileSync(
      join(typesDir, family, "index.gen.ts"),
      `// Generated by scripts/gen-schemas.ts.\n${lines.join("\n")}\n`,
    );
  }
  // Format with the project's formatter so `biome check` passes on the committed output.
  execFileSync(
    "npx",
    ["biome", "format", "--write", schemaDir, join(typesDir, "istio"), join(typesDir, "gateway-api")],
    {
      cwd: repo,
      stdio: "inherit",
    },
  );
}

main();
