// Generates, from the Istio and Gateway API CRDs, the validation schemas in src/config/schema/generated/
// and the spec types in src/config/types/{istio,gateway-api}/ (the types several kinds of a family share
// once, in its common.gen.ts). Run by hand when the CRDs change:
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

/** The part of a schema its TypeScript type depends on: schemas alike in it share an interface. */
function typeShape(schema: Schema): Schema {
  const shape: Schema = {};
  if (schema.type !== undefined) shape.type = schema.type;
  if (schema.enum !== undefined) shape.enum = schema.enum;
  if (schema.nullable !== undefined) shape.nullable = schema.nullable;
  if (schema["x-kubernetes-int-or-string"] !== undefined)
    shape["x-kubernetes-int-or-string"] = schema["x-kubernetes-int-or-string"];
  if (schema.required !== undefined) shape.required = [...schema.required].sort();
  if (schema.properties) {
    shape.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, typeShape(v)]));
  }
  if (schema.items) shape.items = typeShape(schema.items);
  if (typeof schema.additionalProperties === "object")
    shape.additionalProperties = typeShape(schema.additionalProperties);
  return shape;
}

function typeKey(schema: Schema): string {
  return JSON.stringify(typeShape(schema));
}

/** Every object schema below `schema`, by its type key, named after the shortest path that leads to it. */
function collectNames(schema: Schema, path: string, names: Map<string, string>): void {
  if (schema.properties) {
    const key = typeKey(schema);
    const known = names.get(key);
    if (known === undefined || path.length < known.length) names.set(key, path);
    for (const [prop, sub] of Object.entries(schema.properties)) collectNames(sub, path + pascal(prop), names);
  }
  if (schema.items) collectNames(schema.items, path, names);
  if (typeof schema.additionalProperties === "object") collectNames(schema.additionalProperties, `${path}Value`, names);
}

/** A kind's interface names ("VirtualServiceHttpMatch"), its spec named `<Kind>Spec`. */
function kindNames(kind: string, spec: Schema): Map<string, string> {
  const names = new Map<string, string>();
  collectNames(spec, kind, names);
  names.set(typeKey(spec), `${kind}Spec`);
  return names;
}

/** The PascalCase words of a name: "HTTPRouteParentRefs" → HTTP, Route, Parent, Refs. */
function words(name: string): string[] {
  return name.match(/[A-Z]+(?![a-z])|[A-Z][a-z0-9]*|[a-z0-9]+/g) ?? [];
}

/**
 * A name for a schema several kinds share: a kind's spec keeps its name; otherwise the words the kinds'
 * names end with, their kind left off ("SidecarInboundConnectionPool", "DestinationRuleTrafficPolicy-
 * ConnectionPool" → "ConnectionPool"), or else the shortest of those names, their kind left off
 * ("AuthorizationPolicyTargetRef", "EnvoyFilterTargetRefs" → "TargetRef").
 */
function sharedName(byKind: ReadonlyMap<string, string>): string {
  const spec = [...byKind].find(([kind, name]) => name === `${kind}Spec`);
  if (spec) return spec[1];
  const suffixes = [...byKind].map(([kind, name]) => words(name.slice(kind.length)));
  const common: string[] = [];
  for (let i = 1; suffixes.every((w) => w.length >= i); i++) {
    const word = suffixes[0][suffixes[0].length - i];
    if (!suffixes.every((w) => w[w.length - i] === word)) break;
    common.unshift(word);
  }
  if (common.length > 0) return common.join("");
  return suffixes.map((w) => w.join("")).reduce((a, b) => (b.length < a.length ? b : a));
}

// Shared schemas whose derived name would mislead, by one kind's own name for them: their proto message name.
const PROTO_NAMES: ReadonlyMap<string, string> = new Map([
  ["VirtualServiceHttpMirror", "Destination"],
  ["VirtualServiceHttpMirrorPort", "PortSelector"],
  ["GatewayServersTls", "ServerTlsSettings"],
  ["GatewayServersTlsTlsCertificates", "ServerTlsCertificate"],
]);

/**
 * The object schemas that two or more kinds of a family have alike, each with one name, to be declared
 * once in the family's common.gen.ts.
 */
function sharedSchemas(kinds: readonly { kind: string; spec: Schema }[]): Map<string, string> {
  const byKey = new Map<string, Map<string, string>>();
  for (const { kind, spec } of kinds) {
    for (const [key, name] of kindNames(kind, spec)) {
      const byKind = byKey.get(key) ?? new Map<string, string>();
      byKind.set(kind, name);
      byKey.set(key, byKind);
    }
  }
  // Names a shared interface must not take: the kinds' own interfaces and config object types.
  const taken = new Set(kinds.map(({ kind }) => kind));
  for (const byKind of byKey.values()) if (byKind.size === 1) for (const name of byKind.values()) taken.add(name);
  const shared = new Map<string, string>();
  for (const [key, byKind] of byKey) {
    if (byKind.size < 2) continue;
    const proto = [...byKind.values()].map((own) => PROTO_NAMES.get(own)).find((n) => n !== undefined);
    let name = proto ?? sharedName(byKind);
    // A clash falls back to the first kind's name for it, which no other schema of that kind has.
    if (taken.has(name)) name = [...byKind.values()][0];
    taken.add(name);
    shared.set(key, name);
  }
  return shared;
}

/**
 * Emits spec interfaces: one per object schema in `names`, identical schemas sharing it. A schema in
 * `imports` is referred to by that name and not declared; `imported` lists those used.
 */
class TypeWriter {
  private readonly declared = new Set<string>();
  private readonly declarations: string[] = [];
  readonly imported = new Set<string>();

  constructor(
    private readonly names: ReadonlyMap<string, string>,
    private readonly imports: ReadonlyMap<string, string>,
  ) {}

  /** Declares the interfaces for `schemas` and what they use; returns the declarations. */
  write(schemas: Iterable<Schema>): string {
    for (const schema of schemas) this.declare(schema);
    return this.declarations.join("\n\n");
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

  /** Declares the interface for an object schema once (or notes its import); returns its name. */
  private declare(schema: Schema): string {
    const key = typeKey(schema);
    const shared = this.imports.get(key);
    if (shared !== undefined) {
      this.imported.add(shared);
      return shared;
    }
    const name = this.names.get(key) ?? "";
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

const COMMON_TYPES = "common.gen.ts";

/** One kind's types file: its config object type and the spec interfaces not in common.gen.ts. */
function kindTypes(kind: string, spec: Schema, shared: ReadonlyMap<string, string>): string {
  const writer = new TypeWriter(kindNames(kind, spec), shared);
  let body = writer.write([spec]);
  // A spec another kind has alike is declared once, under that kind's name.
  const specName = shared.get(typeKey(spec));
  if (specName !== undefined && specName !== `${kind}Spec`) body = `export type ${kind}Spec = ${specName};`;
  const imported = [...writer.imported].sort();
  const imports = [`import type { ConfigObject } from "../../model.ts";`];
  if (imported.length > 0) imports.push(`import type { ${imported.join(", ")} } from "./${COMMON_TYPES}";`);
  const header = [
    `// Generated by scripts/gen-schemas.ts from the ${kind} CRD. Do not edit.`,
    imports.join("\n"),
    `export type ${kind} = ConfigObject<${kind}Spec>;`,
  ];
  return `${header.join("\n\n")}\n\n${body}\n`;
}

/** A family's common.gen.ts: the interfaces several of its kinds use. */
function commonTypes(family: string, shared: ReadonlyMap<string, string>): string {
  const body = new TypeWriter(shared, new Map()).write([...shared.keys()].map((key) => JSON.parse(key) as Schema));
  return `// Generated by scripts/gen-schemas.ts: the types several ${family} kinds share. Do not edit.\n\n${body}\n`;
}

function typesFileName(info: KindInfo): string {
  return `${info.kind.toLowerCase()}.gen.ts`;
}

const KIND_OBJECTS = "kind-objects.gen.ts";

/** The typed object of every kind by its kind key, for typed reads of the config store. */
function kindObjects(): string {
  const entry = (info: KindInfo) => {
    const type = !info.hasSchema
      ? "ConfigObject"
      : info.family === "istio"
        ? `istio.${info.kind}`
        : `gatewayapi.${info.kind}`;
    return `  "${info.group}/${info.kind}": ${type};`;
  };
  return [
    "// Generated by scripts/gen-schemas.ts.",
    'import type { ConfigObject } from "../model.ts";',
    'import type * as gatewayapi from "./gateway-api/index.gen.ts";',
    'import type * as istio from "./istio/index.gen.ts";',
    "",
    '/** Each kind\'s typed object by kind key ("group/Kind"); Kubernetes built-ins stay plain ConfigObjects. */',
    "export interface KindObjects {",
    ...KINDS.map(entry),
    "}",
    "",
  ].join("\n");
}

function main(): void {
  const crds = readCrds();
  rmSync(schemaDir, { recursive: true, force: true });
  mkdirSync(schemaDir, { recursive: true });
  const families = new Map<string, { info: KindInfo; spec: Schema }[]>([
    ["istio", []],
    ["gateway-api", []],
  ]);
  for (const info of KINDS) {
    if (!info.hasSchema) continue;
    const crd = crds.get(`${info.group}/${info.kind}`);
    if (!crd) throw new Error(`no CRD for ${info.group}/${info.kind} in ${crdDir}`);
    const generated = schemasFor(info, crd);
    writeFileSync(join(schemaDir, schemaFileName(info)), JSON.stringify(generated));
    const spec = generated.schemas[generated.versions[info.preferredVersion]].properties?.spec ?? {};
    families.get(info.family)?.push({ info, spec });
  }
  for (const [family, kinds] of families) {
    const familyDir = join(typesDir, family);
    rmSync(familyDir, { recursive: true, force: true });
    mkdirSync(familyDir, { recursive: true });
    const shared = sharedSchemas(kinds.map(({ info, spec }) => ({ kind: info.kind, spec })));
    const files = [COMMON_TYPES];
    writeFileSync(join(familyDir, COMMON_TYPES), commonTypes(family, shared));
    for (const { info, spec } of kinds) {
      writeFileSync(join(familyDir, typesFileName(info)), kindTypes(info.kind, spec, shared));
      files.push(typesFileName(info));
    }
    const lines = files.sort().map((file) => `export type * from "./${file}";`);
    writeFileSync(join(familyDir, "index.gen.ts"), `// Generated by scripts/gen-schemas.ts.\n${lines.join("\n")}\n`);
  }
  writeFileSync(join(typesDir, KIND_OBJECTS), kindObjects());
  // Format with the project's formatter so `biome check` passes on the committed output.
  execFileSync(
    "npx",
    [
      "biome",
      "format",
      "--write",
      schemaDir,
      join(typesDir, "istio"),
      join(typesDir, "gateway-api"),
      join(typesDir, KIND_OBJECTS),
    ],
    {
      cwd: repo,
      stdio: "inherit",
    },
  );
}

main();
