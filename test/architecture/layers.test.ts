// The layers of src/, as the build enforces them (issue 27). Every non-test .ts file under src/
// (generated code included) is read, its relative imports resolved (`import type`, `export … from`
// and dynamic `import("…")` included), and the test fails on
//   a. any import cycle between files (each strongly connected component is named, file by file);
//   b. any import of a folder of the same or a higher rank than the importing file's folder;
//   c. any module importing the index.ts of its own directory (a barrel is the folder's face to others).
//
//   rank  folders                      what they are
//    0    api                          protobuf bindings (gen/), encoders, gRPC plumbing
//    1    util                         small helpers, the version
//    2    log                          pino scopes
//    3    krt                          incremental collections
//    4    config                       kinds, decoding, validation, MeshConfig
//    5    sources                      the config store and what fills it
//    6    registry                     services, endpoints, workloads
//    7    security                     authn, CA
//    8    gatewayapi                   Gateway API → Istio config
//    9    model                        proxy, push context, indexes
//   10    networking                   Envoy config builders
//   11    configgen                    per-proxy assembly (Istio's ConfigGenerator), the XdsCache
//   12    xds                          generators, push pipeline, ADS server
//   13    webhooks                     injection and validation webhooks
//   14    analysis · admin · agent     siblings: none imports another
//   15    cli · library                siblings
//   16    bin                          the programs
//
// A folder may import only its own files and folders of lower rank; folders of one rank are siblings
// and import none of each other. The order is Istio's flow (sources → registry → model → networking →
// xds) with the leaves at the bottom. Two positions are set by what the code imports rather than by
// the first sketch: security sits above registry, because authn names callers with the
// registry's spiffeIdentity (only xds, admin, agent and bin import security, so its place between
// registry and xds is free; it stays where the sketch had it); webhooks sits below analysis (not beside
// it), because the analyzers reuse the injection policy's ignored namespaces and annotation checks, while webhooks itself imports only config and sources.
// test/architecture/layers.ts is the checker; the tests below also show it failing on a made-up graph.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { checkLayers, describeReport, importGraph, type Ranks, readSources, relativeImports } from "./layers.ts";

const LAYERS: readonly (readonly string[])[] = [
  ["api"],
  ["util"],
  ["log"],
  ["krt"],
  ["config"],
  ["sources"],
  ["registry"],
  ["security"],
  ["gatewayapi"],
  ["model"],
  ["networking"],
  ["configgen"],
  ["xds"],
  ["webhooks"],
  ["analysis", "admin", "agent"],
  ["cli", "library"],
  ["bin"],
];

const RANKS: Ranks = new Map(LAYERS.flatMap((folders, rank) => folders.map((folder) => [folder, rank] as const)));

const SRC = fileURLToPath(new URL("../../src", import.meta.url));

describe("src/ layering", () => {
  const files = readSources(SRC);

  test("no import cycles, no import up the layers, no module importing its own index.ts", () => {
    const problems = describeReport(checkLayers(files, RANKS));
    assert.deepEqual(problems, [], `\n${problems.join("\n")}\n`);
  });

  test("no xDS generator imports another (they share only the helper modules)", () => {
    const imports = generatorImports(importGraph(files).edges);
    assert.deepEqual(imports, []);
  });

  test("the check reads the real graph (not an empty one)", () => {
    const { edges } = importGraph(files);
    let count = 0;
    for (const targets of edges.values()) count += targets.length;
    assert.ok(files.size > 500, `only ${files.size} files under src/`);
    assert.ok(count > files.size, `only ${count} imports between ${files.size} files`);
  });
});

// The modules of xds/generators/ that are not generators: what generators share (push decisions, the
// store's Secrets, debug access) and the folder's barrel.
const GENERATOR_HELPERS = new Set(["needs-push.ts", "secrets.ts", "debug-auth.ts", "debug-endpoints.ts", "index.ts"]);
const GENERATORS = "xds/generators/";

/** `a.ts -> b.ts` for each import of one generator module by another in xds/generators/. */
function generatorImports(edges: ReadonlyMap<string, readonly string[]>): string[] {
  const out: string[] = [];
  for (const [from, targets] of edges) {
    if (!from.startsWith(GENERATORS) || GENERATOR_HELPERS.has(from.slice(GENERATORS.length))) continue;
    for (const to of targets) {
      const name = to.slice(GENERATORS.length);
      if (to.startsWith(GENERATORS) && !name.includes("/") && !GENERATOR_HELPERS.has(name))
        out.push(`${from} -> ${to}`);
    }
  }
  return out;
}

describe("the layering check fails where it should", () => {
  test("a generator importing another generator is reported", () => {
    const edges = new Map([
      ["xds/generators/rds.ts", ["xds/generators/cds.ts", "xds/generators/needs-push.ts", "configgen/routes.ts"]],
      ["xds/generators/cds.ts", ["xds/generators/needs-push.ts"]],
    ]);
    assert.deepEqual(generatorImports(edges), ["xds/generators/rds.ts -> xds/generators/cds.ts"]);
  });

  test("an import up the layers (model importing xds) is reported", () => {
    const files = new Map([
      ["model/push.ts", 'import { serve } from "../xds/server.ts";\nexport const push = serve;\n'],
      ["xds/server.ts", "export function serve() {}\n"],
    ]);
    const report = checkLayers(files, RANKS);
    assert.deepEqual(report.backEdges, ["model/push.ts -> xds/server.ts (model rank 9 imports xds rank 12)"]);
    assert.deepEqual(report.cycles, []);
  });

  test("an import between siblings of one rank is reported", () => {
    const files = new Map([
      ["admin/debug.ts", 'import type { Report } from "../analysis/report.ts";\nexport type R = Report;\n'],
      ["analysis/report.ts", "export interface Report {}\n"],
    ]);
    assert.equal(checkLayers(files, RANKS).backEdges.length, 1);
  });

  test("a cycle is reported with its files, type-only and dynamic imports counting", () => {
    const files = new Map([
      ["model/a.ts", 'import type { B } from "./b.ts";\nexport type A = B;\n'],
      ["model/b.ts", 'export async function c() {\n  return import("./c.ts");\n}\nexport type B = 1;\n'],
      ["model/c.ts", 'export { type A } from "./a.ts";\n'],
      ["model/d.ts", 'import "./a.ts";\n'],
    ]);
    const report = checkLayers(files, RANKS);
    assert.deepEqual(report.cycles, [["model/a.ts", "model/b.ts", "model/c.ts"]]);
    assert.match(
      describeReport(report).join("\n"),
      /import cycle of 3 files: model\/a\.ts, model\/b\.ts, model\/c\.ts/,
    );
  });

  test("a module importing its own folder's index.ts is reported", () => {
    const files = new Map([
      ["model/index.ts", 'export { x } from "./x.ts";\n'],
      ["model/x.ts", "export const x = 1;\n"],
      ["model/y.ts", 'import { x } from "./index.ts";\nexport const y = x;\n'],
    ]);
    assert.deepEqual(checkLayers(files, RANKS).ownBarrelImports, ["model/y.ts -> model/index.ts"]);
  });

  test("a folder without a rank and an import of a missing file are reported", () => {
    const files = new Map([["extras/a.ts", 'import { b } from "./b.ts";\n']]);
    const report = checkLayers(files, RANKS);
    assert.deepEqual(report.unranked, ["extras/a.ts"]);
    assert.deepEqual(report.unresolved, ['extras/a.ts: "./b.ts"']);
  });

  test("imports are read from code, not from comments or strings", () => {
    const source = [
      "// import { old } from './old.ts';",
      "/* export * from './block.ts'; */",
      "import {",
      "  type A,",
      "  b,",
      '} from "./multi-line.ts";',
      'export * from "./star.ts";',
      'export type { C } from "./types.ts";',
      'import "./side-effect.ts";',
      'const lazy = () => import("./lazy.ts");',
      'type T = typeof import("./type-position.ts");',
      "const text = \"import { x } from './in-a-string.ts'\";",
      "const re = /import { y } from '.\\/in-a-regex.ts'/;",
      'import { z } from "node:fs";',
    ].join("\n");
    assert.deepEqual(relativeImports(source).sort(), [
      "./lazy.ts",
      "./multi-line.ts",
      "./side-effect.ts",
      "./star.ts",
      "./type-position.ts",
      "./types.ts",
    ]);
  });
});
