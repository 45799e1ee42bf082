// The layers of src/, as the build enforces them (issue 27). Every non-test .ts file under src/
// (generated code included) is read, its relative imports resolved (`import type`, `export … from`
// and dynamic `import("…")` included), and the test fails on
//   a. any import cycle between files (each strongly connected component is named, file by file);
//   b. any import of a folder of the same or a higher rank than the importing file's folder;
//   c. any module importing the index.ts of its own directory (a barrel is the folder's face to others);
//   d. any module importing a file of another top-level folder that is not an index.ts: other folders
//      import a folder only through its barrel, the top-level folder's index.ts or a sub-folder's own
//      (networking/cluster/index.ts, not networking/cluster/tls.ts), except the imports DIRECT_IMPORTS
//      lists with their reasons (generated api/gen/ code is exempt). A name another folder needs is
//      re-exported by the barrel; a direct import is for what a barrel must not carry (DIRECT_IMPORTS says why).
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
//    8    gatewayapi · ingress ·       Gateway API and Kubernetes Ingress → Istio config, and ambient's
//         ambient                      index (what ztunnel is sent; siblings)
//    9    model                        proxy, push context, indexes
//   10    networking                   Envoy config builders
//   11    configgen                    per-proxy assembly (Istio's ConfigGenerator), the XdsCache
//   12    xds                          generators, push pipeline, ADS server
//   13    webhooks                     injection and validation webhooks
//   14    analysis · admin · agent ·   siblings: none imports another
//         controllers · install        (controllers: what writes to the cluster, by Lease leaders;
//                                      install: the manifests `sluice install` renders and applies)
//   15    cli · library                siblings
//   16    bin                          the programs
//
// A folder may import only its own files and folders of lower rank; folders of one rank are siblings
// and import none of each other. The order is Istio's flow (sources → registry → model → networking →
// xds) with the leaves at the bottom. Two positions are set by what the code imports rather than by
// the issue's first sketch: security sits above registry, because authn names callers with the
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
  ["gatewayapi", "ingress", "ambient"],
  ["model"],
  ["networking"],
  ["configgen"],
  ["xds"],
  ["webhooks"],
  ["analysis", "admin", "agent", "controllers", "install"],
  ["cli", "library"],
  ["bin"],
];

// The imports of another top-level folder's non-index file that stay direct, `from -> to` (paths under
// src/; `* -> to` for every importer), each with why a barrel import would be worse. A stale entry
// (no import matches it any more) fails the test too, so the list stays true.
const EAGER_CLI =
  "a command definition the sluice CLI loads eagerly needs only STDIN_PATH; config/index.ts would add every validator, and the protobuf bindings, to `sluice version`'s start-up";
const DAEMON_FLAGS =
  "a daemon needs only the flag check; cli/index.ts is the whole sluice CLI (every command's yargs definition)";
const XDS_CLIENT =
  "an xDS client command (proxy-status, proxy-config, version) needs a type URL constant; xds/index.ts is the whole control plane (generators, configgen, networking), some 250 more modules for the command to load";
const KUBE_CLIENT =
  "the Kubernetes client alone; sources/kube/index.ts adds the config source (informers, mirror, and through them config's validators)";
const ANALYZER =
  "`sluice analyze` loads the analyzers; the barrel (model's push context, the Gateway API conversion, the RDS builders, the registry's krt collections, injection) would add up to 150 modules for one helper";
const DIRECT_IMPORTS: ReadonlyMap<string, string> = new Map([
  // Modules a barrel must not re-export: their cost would fall on every importer of the barrel.
  [
    "* -> util/version.ts",
    "reads package.json and dist/build-info.json as it loads: in a util barrel every importer of util (the agent, each CLI command) would read them",
  ],
  // Kept out of the config barrel, whose every export sluice/api re-exports as a type (library/api.ts).
  [
    "* -> config/typed.ts",
    "isKind's signature names KindObjects, which the public API leaves out (see the next entry)",
  ],
  ["* -> config/mesh-decode.ts", "the mesh decoder's internal step, not part of the public API"],
  [
    "* -> config/types/kind-objects.gen.ts",
    "KindObjects names Istio's ProxyConfig kind, which config/types/index.ts (the public API's types) leaves to the mesh's ProxyConfig of the same name",
  ],
  [
    "* -> model/store-push.ts",
    "imports the Gateway API conversion, which the agent, importing model/index.ts, never needs (see model/index.ts)",
  ],
  // Bundle size: the programs' eager start-up (sluice version, the daemons) would load a whole folder.
  ["cli/analyze.ts -> config/decode-paths.ts", EAGER_CLI],
  ["cli/filename-option.ts -> config/decode-paths.ts", EAGER_CLI],
  ["cli/kube-inject.ts -> config/decode-paths.ts", EAGER_CLI],
  ["cli/validate.ts -> config/decode-paths.ts", EAGER_CLI],
  ["bin/sluiced.ts -> cli/flags.ts", DAEMON_FLAGS],
  ["bin/sluice-agent.ts -> cli/flags.ts", DAEMON_FLAGS],
  [
    "* -> sources/kube/labels.ts",
    "label selectors, needed without Kubernetes: sources/kube/index.ts is the Kubernetes source (client, informers, metrics), which sluiced loads lazily, only with --kubeconfig",
  ],
  // Bundle size of the CLI's lazily loaded commands (scripts/build.mjs gives each its own chunk): the
  // barrel would make the command load a far larger folder than the one module it uses.
  ["cli/xds-client.ts -> xds/generators/debug-endpoints.ts", XDS_CLIENT],
  ["cli/xds-client.ts -> xds/types.ts", XDS_CLIENT],
  ["cli/internal-debug.ts -> xds/types.ts", XDS_CLIENT],
  ["cli/proxy-config.ts -> xds/types.ts", XDS_CLIENT],
  ["cli/proxy-status-writer.ts -> xds/types.ts", XDS_CLIENT],
  ["cli/remote-clusters.ts -> xds/types.ts", XDS_CLIENT],
  ["cli/proxy-status-run.ts -> xds/generators/status.ts", XDS_CLIENT],
  ["cli/version-xds.ts -> xds/generators/status.ts", XDS_CLIENT],
  [
    "cli/translate-state.ts -> xds/translate.ts",
    "`sluice x translate` needs the translation alone; xds/index.ts adds the ADS server, push pipeline and CA",
  ],
  [
    "cli/describe-report.ts -> analysis/cluster.ts",
    "`sluice x describe` reads the cluster only; analysis/index.ts adds every analyzer",
  ],
  ["cli/kube-access.ts -> sources/kube/client.ts", KUBE_CLIENT],
  ["cli/analyze-run.ts -> sources/kube/client.ts", KUBE_CLIENT],
  ["analysis/cluster.ts -> sources/kube/client.ts", KUBE_CLIENT],
  ["analysis/cluster.ts -> sources/kube/paths.ts", KUBE_CLIENT],
  ["analysis/analyzers/conflicting-mesh-gateway-hosts.ts -> model/host.ts", ANALYZER],
  ["analysis/analyzers/vs-gateway.ts -> model/host.ts", ANALYZER],
  ["analysis/analyzers/gateway-secret.ts -> gatewayapi/credentials.ts", ANALYZER],
  ["analysis/analyzers/jwt-claim-route.ts -> networking/route/match.ts", ANALYZER],
  ["analysis/analyzers/port-name.ts -> registry/kube.ts", ANALYZER],
  ["analysis/analyzers/subset-select-pod.ts -> registry/workloads.ts", ANALYZER],
  ["analysis/analyzers/annotations.ts -> webhooks/inject/annotations.ts", ANALYZER],
  ["analysis/run.ts -> webhooks/inject/policy.ts", ANALYZER],
  // Lazy import()s: the command loads the one module it needs only when it runs (scripts/build.mjs
  // splits each into its own chunk); the barrel would load the whole folder.
  ["bin/sluiced.ts -> security/ca/kube-store.ts", "lazy import(), only with a Kubernetes CA Secret store"],
  ["cli/convert.ts -> config/decode.ts", "lazy import() of the YAML decoder when the command runs"],
  ["cli/kube-inject.ts -> config/decode.ts", "lazy import() of the YAML decoder when the command runs"],
  ["cli/kube-inject.ts -> config/mesh.ts", "lazy import() of the MeshConfig loader when the command runs"],
  ["cli/precheck.ts -> config/decode.ts", "lazy import() of the YAML decoder when the command runs"],
  ["cli/translate.ts -> config/mesh.ts", "lazy import() of the MeshConfig loader when the command runs"],
  ["cli/translate.ts -> config/mesh-networks.ts", "lazy import() of the MeshNetworks loader when the command runs"],
  ["cli/validate.ts -> config/decode.ts", "lazy import() of the YAML decoder when the command runs"],
  // The public library re-exports a whole module, which no barrel names as a whole.
  [
    "library/api.ts -> config/mesh-types.ts",
    "`export type *`: sluice/api gives every MeshConfig type, where config/index.ts names only the ones Sluice's folders use",
  ],
]);

const RANKS: Ranks = new Map(LAYERS.flatMap((folders, rank) => folders.map((folder) => [folder, rank] as const)));

const SRC = fileURLToPath(new URL("../../src", import.meta.url));

describe("src/ layering", () => {
  const files = readSources(SRC);

  test("no import cycles, no import up the layers, no module importing its own index.ts, other folders only through their barrels", () => {
    const problems = describeReport(checkLayers(files, RANKS, DIRECT_IMPORTS.keys()));
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

  test("an import of another folder's non-index file is reported, unless allowlisted", () => {
    const files = new Map([
      ["config/index.ts", 'export { kinds } from "./kinds.ts";\nexport { decode } from "./decode.ts";\n'],
      ["config/kinds.ts", "export const kinds = [];\n"],
      ["config/decode.ts", 'import { kinds } from "./kinds.ts";\nexport const decode = kinds;\n'],
      ["networking/cluster/index.ts", 'export { tls } from "./tls.ts";\n'],
      ["networking/cluster/tls.ts", 'import { kinds } from "../../config/index.ts";\nexport const tls = kinds;\n'],
      [
        "xds/cds.ts",
        [
          'import { kinds } from "../config/kinds.ts";',
          'import { decode } from "../config/decode.ts";',
          'import type { tls } from "../networking/cluster/tls.ts";',
          'import { tls as t } from "../networking/cluster/index.ts";',
          "export const cds = [kinds, decode, t];",
          "export type T = typeof tls;",
        ].join("\n"),
      ],
      ["api/gen/x_pb.ts", 'import { kinds } from "../../config/kinds.ts";\nexport const x = kinds;\n'],
    ]);
    const allowed = ["xds/cds.ts -> config/decode.ts", "* -> util/version.ts"];
    const report = checkLayers(files, RANKS, allowed);
    assert.deepEqual(report.barrelBypasses, [
      "xds/cds.ts -> config/kinds.ts",
      "xds/cds.ts -> networking/cluster/tls.ts",
    ]);
    assert.deepEqual(report.staleAllowances, ["* -> util/version.ts"]);
    assert.match(
      describeReport(report).join("\n"),
      /import of another folder's non-index file: xds\/cds\.ts -> config\/kinds\.ts/,
    );
    // Generated code is exempt from the barrel rule (its import of config is still against the layering).
    assert.deepEqual(report.backEdges, ["api/gen/x_pb.ts -> config/kinds.ts (api rank 0 imports config rank 4)"]);
    assert.deepEqual(report.cycles, []);
    // With every bypass allowed, nothing is left to report (a wildcard entry covers every importer).
    const clean = checkLayers(files, RANKS, [
      "* -> config/kinds.ts",
      "* -> config/decode.ts",
      "xds/cds.ts -> networking/cluster/tls.ts",
    ]);
    assert.deepEqual([clean.barrelBypasses, clean.staleAllowances], [[], []]);
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
