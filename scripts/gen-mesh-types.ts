// Generates src/config/mesh-types.gen.ts, the types and decoder tables of Istio's mesh configuration
// (istio.mesh.v1alpha1: MeshConfig, ProxyConfig, MeshNetworks and the messages they use), from Istio's
// mesh protos. Run by hand when istiod's peer moves to another istio.io/api:
//   node --import tsx scripts/gen-mesh-types.ts [istio-api-dir]
// (default: $(go env GOMODCACHE)/istio.io/api@<ISTIO_API_VERSION>; `go mod download istio.io/api@<version>`
// brings it into the module cache). Output is committed; the protos are not. Only names, numbers and types
// are read from them, no documentation text.
//
// The protos are staged into build/mesh-proto/ with what they import (google/api from the googleapis protos
// in @grpc/grpc-js-xds; google/protobuf is built into buf), compiled by the repo's buf into a
// FileDescriptorSet (no network, no BSR) and walked with @bufbuild/protobuf.
//
// Messages of istio.mesh.v1alpha1 become interfaces and field tables. Messages of other packages (the
// networking ones: ClientTLSSettings, LocalityLoadBalancerSetting, ...) stay opaque, `Record<string, unknown>`
// and kind "object": their own validators (src/config/validation/common/) check them.

import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createFileRegistry,
  type DescEnum,
  type DescField,
  type DescFile,
  type DescMessage,
  fromBinary,
  ScalarType,
} from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

// The istio.io/api that istio.io/istio requires at istiod's version in test/peers/versions.json
// (`go list -m -json istio.io/api` in a module requiring that istio.io/istio).
const ISTIO_API_VERSION = "v1.31.0-rc.0.0.20260824154656-b943409680a7";

const PACKAGE = "istio.mesh.v1alpha1";
const ROOT_FILES = ["mesh/v1alpha1/config.proto", "mesh/v1alpha1/proxy.proto", "mesh/v1alpha1/network.proto"];

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const stageDir = join(repo, "build/mesh-proto");
const descriptorFile = join(repo, "build/mesh-proto.binpb");
const outFile = join(repo, "src/config/mesh-types.gen.ts");

function goModCache(): string {
  try {
    const dir = execFileSync("go", ["env", "GOMODCACHE"], { encoding: "utf8" }).trim();
    if (dir !== "") return dir;
  } catch {
    // No go on PATH: Go's default.
  }
  return process.env.GOMODCACHE ?? join(process.env.GOPATH ?? join(homedir(), "go"), "pkg/mod");
}

const apiDir = process.argv[2] ?? join(goModCache(), `istio.io/api@${ISTIO_API_VERSION}`);
// How the generated file names its source: the version, when the directory is a module cache one.
const apiVersion = /@([^/@]+)\/?$/.exec(apiDir)?.[1];
const apiLabel = apiVersion === undefined ? "istio.io/api (a local checkout)" : `istio.io/api@${apiVersion}`;
// Where imports are looked up, in order.
const importRoots = [apiDir, join(repo, "node_modules/@grpc/grpc-js-xds/deps/googleapis")];

// ---- Compiling the protos

const importPattern = /^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;/gm;

function findInRoots(file: string): string {
  for (const root of importRoots) {
    const path = join(root, file);
    if (existsSync(path)) return path;
  }
  throw new Error(`gen-mesh-types: cannot find ${file} in ${importRoots.join(", ")}`);
}

/** The root files and everything they import (but google/protobuf, which buf has built in): path → text. */
function collectClosure(): Map<string, string> {
  const sources = new Map<string, string>();
  const pending = [...ROOT_FILES];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (sources.has(file)) continue;
    const text = readFileSync(findInRoots(file), "utf8");
    sources.set(file, text);
    for (const match of text.matchAll(importPattern)) {
      if (!match[1].startsWith("google/protobuf/")) pending.push(match[1]);
    }
  }
  return sources;
}

function compile(): DescFile[] {
  if (!existsSync(apiDir)) throw new Error(`gen-mesh-types: no ${apiDir}; pass the istio.io/api directory`);
  rmSync(stageDir, { recursive: true, force: true });
  for (const [file, text] of collectClosure()) {
    mkdirSync(dirname(join(stageDir, file)), { recursive: true });
    writeFileSync(join(stageDir, file), text);
  }
  const buf = join(repo, "node_modules/.bin/buf");
  const result = spawnSync(
    buf,
    ["build", "build/mesh-proto", "--as-file-descriptor-set", "-o", "build/mesh-proto.binpb"],
    {
      cwd: repo,
      stdio: "inherit",
      env: { ...process.env, BUF_CACHE_DIR: join(repo, "build/buf-cache") },
    },
  );
  if (result.status !== 0)
    throw new Error(`gen-mesh-types: buf build failed (${result.error ?? `exit ${result.status}`})`);
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(descriptorFile)));
  return ROOT_FILES.map((name) => {
    const file = registry.getFile(name);
    if (!file) throw new Error(`gen-mesh-types: ${name} missing from the descriptor set`);
    return file;
  });
}

// ---- Walking the descriptors

/** A message's or enum's name within its package: "MeshConfig.OutboundTrafficPolicy". */
function localName(desc: DescMessage | DescEnum): string {
  const pkg = desc.file.proto.package;
  return pkg === "" ? desc.typeName : desc.typeName.slice(pkg.length + 1);
}

const inPackage = (desc: DescMessage | DescEnum): boolean => desc.file.proto.package === PACKAGE;

/** Messages of the package in declaration order, each followed by its nested ones; likewise enums. */
function collect(files: readonly DescFile[]): { messages: DescMessage[]; enums: DescEnum[] } {
  const messages: DescMessage[] = [];
  const enums: DescEnum[] = [];
  const visit = (message: DescMessage): void => {
    messages.push(message);
    enums.push(...message.nestedEnums);
    message.nestedMessages.forEach(visit);
  };
  for (const file of files) {
    if (file.proto.package !== PACKAGE) throw new Error(`gen-mesh-types: ${file.name} is not in ${PACKAGE}`);
    enums.push(...file.enums);
    file.messages.forEach(visit);
  }
  return { messages, enums };
}

// Well-known messages read as JSON scalars: decoder kind and TypeScript type.
const WELL_KNOWN: ReadonlyMap<string, readonly [string, string]> = new Map([
  ["google.protobuf.Duration", ["duration", "Duration"]],
  ["google.protobuf.Struct", ["struct", "Record<string, unknown>"]],
  ["google.protobuf.BoolValue", ["bool", "boolean"]],
  ["google.protobuf.StringValue", ["string", "string"]],
  ["google.protobuf.Int32Value", ["int32", "number"]],
  ["google.protobuf.UInt32Value", ["uint32", "number"]],
  ["google.protobuf.Int64Value", ["int64", "number"]],
  ["google.protobuf.DoubleValue", ["double", "number"]],
]);

// Scalars the decoder knows: decoder kind and TypeScript type. Others (uint64, float, bytes) fail loudly.
const SCALARS: ReadonlyMap<ScalarType, readonly [string, string]> = new Map([
  [ScalarType.STRING, ["string", "string"]],
  [ScalarType.BOOL, ["bool", "boolean"]],
  [ScalarType.INT32, ["int32", "number"]],
  [ScalarType.SINT32, ["int32", "number"]],
  [ScalarType.SFIXED32, ["int32", "number"]],
  [ScalarType.UINT32, ["uint32", "number"]],
  [ScalarType.FIXED32, ["uint32", "number"]],
  [ScalarType.INT64, ["int64", "number"]],
  [ScalarType.SINT64, ["int64", "number"]],
  [ScalarType.SFIXED64, ["int64", "number"]],
  [ScalarType.DOUBLE, ["double", "number"]],
]);

/**
 * TypeScript names: a message's or enum's last name part ("OutboundTrafficPolicy"), with as many of its
 * parents' names before it as needed to tell apart types sharing that part ("OutboundTrafficPolicyMode",
 * "InboundTrafficPolicyMode").
 */
function typeNames(descs: readonly (DescMessage | DescEnum)[], reserved: readonly string[]): Map<string, string> {
  const entries = descs.map((d) => ({ typeName: d.typeName, parts: localName(d).split("."), depth: 1 }));
  const nameOf = (e: (typeof entries)[number]): string => e.parts.slice(e.parts.length - e.depth).join("");
  for (;;) {
    const byName = new Map<string, (typeof entries)[number][]>();
    for (const e of entries) byName.set(nameOf(e), [...(byName.get(nameOf(e)) ?? []), e]);
    const clashes = [...byName].filter(([name, group]) => group.length > 1 || reserved.includes(name));
    if (clashes.length === 0) break;
    const growing = clashes.flatMap(([, group]) => group).filter((e) => e.depth < e.parts.length);
    if (growing.length === 0)
      throw new Error(`gen-mesh-types: cannot name apart ${clashes.map(([n]) => n).join(", ")}`);
    for (const e of growing) e.depth++;
  }
  return new Map(entries.map((e) => [e.typeName, nameOf(e)]));
}

/**
 * A message's oneofs as lists of JSON field names. A oneof of one field (OpenTelemetryTracingProvider's
 * sampler, MatchRule's namespaceSelector) cannot have two fields set, so it is left out.
 */
function oneofGroups(message: DescMessage): string[][] {
  return message.oneofs.filter((oneof) => oneof.fields.length > 1).map((oneof) => oneof.fields.map((f) => f.jsonName));
}

interface FieldShape {
  kind: string;
  type: string;
}

class Generator {
  private readonly names: Map<string, string>;
  /** Messages of other packages that fields use, kept opaque. */
  private readonly opaque: DescMessage[] = [];

  constructor(
    private readonly messages: readonly DescMessage[],
    private readonly enums: readonly DescEnum[],
  ) {
    const seen = new Set<string>();
    for (const message of messages) {
      for (const field of message.fields) {
        const target = field.message;
        if (!target || inPackage(target) || WELL_KNOWN.has(target.typeName) || seen.has(target.typeName)) continue;
        seen.add(target.typeName);
        this.opaque.push(target);
      }
    }
    this.names = typeNames([...this.opaque, ...messages, ...enums], ["Duration"]);
  }

  private nameOf(desc: DescMessage | DescEnum): string {
    const name = this.names.get(desc.typeName);
    if (name === undefined) throw new Error(`gen-mesh-types: ${desc.typeName} is not in ${PACKAGE}`);
    return name;
  }

  private scalar(type: ScalarType, field: DescField): FieldShape {
    const shape = SCALARS.get(type);
    if (!shape)
      throw new Error(`gen-mesh-types: ${field.parent.typeName}.${field.name}: unsupported ${ScalarType[type]}`);
    return { kind: shape[0], type: shape[1] };
  }

  private enumShape(desc: DescEnum): FieldShape {
    if (!inPackage(desc)) throw new Error(`gen-mesh-types: enum ${desc.typeName} of another package`);
    return { kind: `enum:${localName(desc)}`, type: this.nameOf(desc) };
  }

  private messageShape(desc: DescMessage): FieldShape {
    const known = WELL_KNOWN.get(desc.typeName);
    if (known) return { kind: known[0], type: known[1] };
    if (desc.typeName.startsWith("google.protobuf.")) throw new Error(`gen-mesh-types: unsupported ${desc.typeName}`);
    if (!inPackage(desc)) return { kind: "object", type: this.nameOf(desc) };
    return { kind: `msg:${localName(desc)}`, type: this.nameOf(desc) };
  }

  private fieldShape(field: DescField): FieldShape {
    switch (field.fieldKind) {
      case "scalar":
        return this.scalar(field.scalar, field);
      case "enum":
        return this.enumShape(field.enum);
      case "message":
        return this.messageShape(field.message);
      case "list": {
        const element =
          field.listKind === "scalar"
            ? this.scalar(field.scalar, field)
            : field.listKind === "enum"
              ? this.enumShape(field.enum)
              : this.messageShape(field.message);
        const type = /[ |]/.test(element.type) ? `(${element.type})[]` : `${element.type}[]`;
        return { kind: `${element.kind}[]`, type };
      }
      case "map": {
        if (field.mapKey !== ScalarType.STRING)
          throw new Error(`gen-mesh-types: ${field.parent.typeName}.${field.name}: map keys other than strings`);
        const value =
          field.mapKind === "scalar"
            ? this.scalar(field.scalar, field)
            : field.mapKind === "enum"
              ? this.enumShape(field.enum)
              : this.messageShape(field.message);
        return { kind: `map:${value.kind}`, type: `Record<string, ${value.type}>` };
      }
    }
  }

  private interfaces(): string[] {
    return this.messages.map((message) => {
      const name = this.nameOf(message);
      const oneofs = oneofGroups(message).map((group) => `one of ${group.join(", ")}`);
      const doc = oneofs.length > 0 ? docComment(`At most ${oneofs.join("; at most ")}.`) : "";
      if (message.fields.length === 0)
        return `/** A message without fields: present or absent. */\nexport type ${name} = Record<string, never>;`;
      const fields = message.fields.map((field) => `  ${field.jsonName}?: ${this.fieldShape(field).type};`);
      return `${doc}export interface ${name} {\n${fields.join("\n")}\n}`;
    });
  }

  private enumTypes(): string[] {
    return this.enums.map(
      (desc) => `export type ${this.nameOf(desc)} = ${desc.values.map((v) => JSON.stringify(v.name)).join(" | ")};`,
    );
  }

  private messageFields(): string[] {
    return this.messages.map((message) => {
      const fields = message.fields.map(
        (field) => `${field.jsonName}: ${JSON.stringify(this.fieldShape(field).kind)},`,
      );
      return `${key(localName(message))}: {${fields.join(" ")}},`;
    });
  }

  private enumValues(): string[] {
    return this.enums.map(
      (desc) => `${key(localName(desc))}: {${desc.values.map((v) => `${v.name}: ${v.number},`).join(" ")}},`,
    );
  }

  private oneofGroups(): string[] {
    return this.messages
      .filter((message) => oneofGroups(message).length > 0)
      .map((message) => {
        const groups = oneofGroups(message).map((group) => JSON.stringify(group));
        return `${key(localName(message))}: [${groups.join(", ")}],`;
      });
  }

  source(): string {
    const opaque = this.opaque.map((desc) => `export type ${this.nameOf(desc)} = Record<string, unknown>;`);
    return [
      `// Generated by scripts/gen-mesh-types.ts from ${apiLabel}`,
      "// (mesh/v1alpha1/{config,proxy,network}.proto). Do not edit.",
      "// The shapes of istio.mesh.v1alpha1 under their JSON names, and the field tables that mesh-decode.ts",
      "// checks YAML against. Messages of other packages are opaque objects, checked by their own validators.",
      "",
      `/** A google.protobuf.Duration as written in YAML/JSON ("10s", "1.5s", "100ms"). */`,
      "export type Duration = string;",
      "",
      "// Networking messages mesh config uses, kept opaque.",
      ...opaque,
      "",
      this.interfaces().join("\n\n"),
      "",
      ...this.enumTypes(),
      "",
      "/**",
      " * Field kinds by message (full proto name without package) and JSON field name: a scalar",
      " * (`string`, `bool`, `int32`, `uint32`, `int64`, `double`, `duration`), `struct` (any JSON object),",
      " * `object` (a networking message checked elsewhere), `enum:<name>`, `msg:<name>`; `[]` marks a list",
      " * and `map:` a map with string keys.",
      " */",
      "export const MESSAGE_FIELDS: Readonly<Record<string, Readonly<Record<string, string>>>> = {",
      ...this.messageFields(),
      "};",
      "",
      "/** Enum value numbers by enum (full proto name without package) and value name. */",
      "export const ENUM_VALUES: Readonly<Record<string, Readonly<Record<string, number>>>> = {",
      ...this.enumValues(),
      "};",
      "",
      "/** Proto oneofs by message: at most one field of each group may be set. */",
      "export const ONEOF_GROUPS: Readonly<Record<string, readonly (readonly string[])[]>> = {",
      ...this.oneofGroups(),
      "};",
      "",
    ].join("\n");
  }
}

/** A doc comment, its words wrapped to fit the line width. */
function docComment(text: string): string {
  if (text.length <= 110) return `/** ${text} */\n`;
  const lines = [""];
  for (const word of text.split(" ")) {
    if (lines[lines.length - 1].length + word.length > 110) lines.push("");
    lines[lines.length - 1] += `${lines[lines.length - 1] === "" ? "" : " "}${word}`;
  }
  return `/**\n${lines.map((line) => ` * ${line}`).join("\n")}\n */\n`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (name: string): string => (IDENTIFIER.test(name) ? name : JSON.stringify(name));

function main(): void {
  const { messages, enums } = collect(compile());
  writeFileSync(outFile, new Generator(messages, enums).source());
  // Format with the project's formatter so `biome check` passes on the committed output.
  execFileSync(join(repo, "node_modules/.bin/biome"), ["format", "--write", outFile], { cwd: repo, stdio: "inherit" });
  console.log(`gen-mesh-types: ${messages.length} messages, ${enums.length} enums from ${apiDir}`);
}

main();
