// Generates the protobuf-es TypeScript bindings in src/api/gen/ (run by `npm ci` through `prepare`).
//
// Inputs: the Envoy, xDS and googleapis protos shipped in @grpc/grpc-js-xds, plus this repo's proto/
// (Istio protos and a corrected validate.proto that replaces the shipped PGV copy). Only the packages
// listed in ROOTS and everything they import are generated. The files are staged into build/proto/
// (buf works on one plain directory there, never on node_modules) and buf runs with the local
// protoc-gen-es plugin only: no remote plugins, no BSR dependencies, no network.
// A stamp holding the hash of every input skips the work when nothing changed.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const deps = join(repo, "node_modules/@grpc/grpc-js-xds/deps");
const stageDir = join(repo, "build/proto");
const outDir = join(repo, "src/api/gen");
const stampFile = join(outDir, ".stamp");

// Import roots in lookup order: ours first, so proto/validate/validate.proto wins over the shipped one.
const importRoots = [
  join(repo, "proto"),
  join(deps, "envoy-api"),
  join(deps, "xds"),
  join(deps, "googleapis"),
  join(deps, "protoc-gen-validate"),
];

// Packages (directories of an import root) or single files to generate, with everything they import.
const ROOTS = [
  "envoy/service/discovery/v3",
  "envoy/service/cluster/v3",
  "envoy/service/listener/v3",
  "envoy/service/route/v3",
  "envoy/service/endpoint/v3",
  "envoy/service/secret/v3",
  "envoy/service/status/v3",
  "envoy/config/core/v3",
  "envoy/config/listener/v3",
  "envoy/config/route/v3",
  "envoy/config/cluster/v3",
  "envoy/config/endpoint/v3",
  "envoy/config/rbac/v3",
  "envoy/admin/v3",
  "envoy/extensions/transport_sockets/tls/v3",
  "envoy/extensions/transport_sockets/raw_buffer/v3",
  "envoy/extensions/transport_sockets/internal_upstream/v3",
  "envoy/extensions/filters/network/http_connection_manager/v3",
  "envoy/extensions/filters/network/tcp_proxy/v3",
  "envoy/extensions/filters/network/rbac/v3",
  "envoy/extensions/filters/network/ext_authz/v3",
  "envoy/extensions/filters/network/mongo_proxy/v3",
  "envoy/extensions/filters/network/redis_proxy/v3",
  "envoy/extensions/filters/network/local_ratelimit/v3",
  "envoy/extensions/transport_sockets/quic/v3",
  "envoy/extensions/path/match/uri_template/v3",
  "envoy/extensions/retry/host/previous_hosts/v3",
  "envoy/extensions/request_id/uuid/v3",
  "envoy/extensions/filters/listener/original_src/v3",
  "envoy/extensions/retry/priority/previous_priorities/v3",
  "envoy/extensions/filters/network/wasm/v3",
  "envoy/extensions/filters/http/router/v3",
  "envoy/extensions/filters/http/fault/v3",
  "envoy/extensions/filters/http/cors/v3",
  "envoy/extensions/filters/http/rbac/v3",
  "envoy/extensions/filters/http/jwt_authn/v3",
  "envoy/extensions/filters/http/ext_authz/v3",
  "envoy/extensions/filters/http/grpc_stats/v3",
  "envoy/extensions/filters/http/grpc_web/v3",
  "envoy/extensions/filters/http/local_ratelimit/v3",
  "envoy/extensions/filters/http/lua/v3",
  "envoy/extensions/filters/http/wasm/v3",
  "envoy/extensions/filters/http/dynamic_forward_proxy/v3",
  "envoy/extensions/filters/http/stateful_session/v3",
  "envoy/extensions/filters/http/set_filter_state/v3",
  "envoy/extensions/filters/network/set_filter_state/v3",
  "envoy/extensions/filters/network/sni_dynamic_forward_proxy/v3",
  "envoy/extensions/clusters/dynamic_forward_proxy/v3",
  "envoy/extensions/http/stateful_session/cookie/v3",
  "envoy/extensions/http/stateful_session/header/v3",
  "envoy/extensions/filters/listener/original_dst/v3",
  "envoy/extensions/filters/listener/tls_inspector/v3",
  "envoy/extensions/filters/listener/http_inspector/v3",
  "envoy/extensions/filters/listener/proxy_protocol/v3",
  "envoy/extensions/upstreams/http/v3",
  "envoy/extensions/access_loggers/file/v3",
  "envoy/extensions/access_loggers/grpc/v3",
  "envoy/extensions/access_loggers/stream/v3",
  "envoy/extensions/access_loggers/open_telemetry/v3",
  "envoy/extensions/access_loggers/filters/cel/v3",
  "envoy/extensions/formatter/req_without_query/v3",
  // The tracers istiod configures; zipkin.proto is ours (proto/), the shipped one being too old.
  "envoy/config/trace/v3/zipkin.proto",
  "envoy/config/trace/v3/datadog.proto",
  "envoy/config/trace/v3/opentelemetry.proto",
  "envoy/config/trace/v3/skywalking.proto",
  "envoy/extensions/tracers/opentelemetry/resource_detectors/v3",
  "envoy/extensions/tracers/opentelemetry/samplers/v3",
  "envoy/extensions/filters/network/mysql_proxy/v3",
  // Filters EnvoyFilter patches commonly insert, so their typed_config resolves as in istiod.
  "envoy/extensions/filters/http/ratelimit/v3",
  "envoy/extensions/filters/network/ratelimit/v3",
  "envoy/extensions/filters/http/compressor/v3",
  "envoy/extensions/compression/gzip/compressor/v3",
  "envoy/extensions/filters/http/header_to_metadata/v3",
  "envoy/extensions/wasm/v3",
  "envoy/type/v3",
  "envoy/type/matcher/v3",
  "xds/type/v3",
  // A waypoint's main_internal listener matches its filter chains by destination IP range, then port.
  "xds/type/matcher/v3/ip.proto",
  "xds/core/v3/cidr.proto",
  "envoy/extensions/matching/common_inputs/network/v3",
  "udpa/type/v1",
  "envoy/extensions/transport_sockets/proxy_protocol/v3",
  "envoy/extensions/network/dns_resolver/cares/v3",
  "google/rpc/status.proto",
  "istio",
  "sluice",
  "validate/validate.proto",
];

// Built into buf and shipped by @bufbuild/protobuf/wkt.
const isWellKnown = (file) => file.startsWith("google/protobuf/");

function findInRoots(file) {
  for (const root of importRoots) {
    const path = join(root, file);
    if (existsSync(path)) return path;
  }
  throw new Error(`gen-proto: cannot find ${file} in any import root`);
}

function protoFilesUnder(dir) {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((name) => name.endsWith(".proto"))
    .map((name) => join(dir, name));
}

function rootFiles() {
  const files = [];
  for (const entry of ROOTS) {
    if (entry.endsWith(".proto")) {
      files.push(entry);
      continue;
    }
    const root = importRoots.find((r) => existsSync(join(r, entry)));
    if (!root) throw new Error(`gen-proto: no import root holds ${entry}`);
    for (const path of protoFilesUnder(join(root, entry))) files.push(relative(root, path));
  }
  return files;
}

const importPattern = /^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;/gm;

// Every file reachable from the roots: import path -> source text. Well-known types are collected apart.
function collectClosure() {
  const sources = new Map();
  const wellKnown = new Set();
  const pending = rootFiles();
  while (pending.length > 0) {
    const file = pending.pop();
    if (sources.has(file)) continue;
    const text = readFileSync(findInRoots(file), "utf8");
    sources.set(file, text);
    for (const match of text.matchAll(importPattern)) {
      const imported = match[1];
      if (isWellKnown(imported)) wellKnown.add(imported);
      else pending.push(imported);
    }
  }
  return { sources, wellKnown: [...wellKnown].sort() };
}

function toolVersion(pkg) {
  return JSON.parse(readFileSync(join(repo, "node_modules", pkg, "package.json"), "utf8")).version;
}

function inputHash(sources) {
  const hash = createHash("sha256");
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  hash.update(readFileSync(join(repo, "buf.gen.yaml")));
  hash.update(`buf ${toolVersion("@bufbuild/buf")} es ${toolVersion("@bufbuild/protoc-gen-es")}\n`);
  for (const file of [...sources.keys()].sort()) hash.update(`${file}\n${sources.get(file)}\n`);
  return hash.digest("hex");
}

// protoc-gen-es names each file's descriptor export after the file path.
const fileExportName = (file) => `file_${file.replace(/\.proto$/, "").replace(/[^A-Za-z0-9]/g, "_")}`;

// src/api/gen/files.ts: every generated file descriptor (and the well-known ones they use), for registries.
function writeFileIndex(sources, wellKnown) {
  const files = [...sources.keys()].sort();
  const lines = [
    "// Generated by scripts/gen-proto.mjs. Do not edit.",
    'import type { DescFile } from "@bufbuild/protobuf";',
  ];
  lines.push(`import { ${wellKnown.map(fileExportName).join(", ")} } from "@bufbuild/protobuf/wkt";`);
  for (const file of files) {
    lines.push(`import { ${fileExportName(file)} } from "./${file.replace(/\.proto$/, "_pb.ts")}";`);
  }
  lines.push("", "export const wellKnownFiles: readonly DescFile[] = [");
  for (const file of wellKnown) lines.push(`  ${fileExportName(file)},`);
  lines.push("];", "", "export const generatedFiles: readonly DescFile[] = [");
  for (const file of files) lines.push(`  ${fileExportName(file)},`);
  lines.push("];", "");
  writeFileSync(join(outDir, "files.ts"), lines.join("\n"));
}

// One index.ts per generated folder (one proto package each) re-exporting its files, so src/api/index.ts
// can expose a package as one namespace. Names are unique within a proto package.
function writePackageIndexes(sources) {
  const byDir = new Map();
  for (const file of [...sources.keys()].sort()) {
    const dir = dirname(file);
    byDir.set(dir, [...(byDir.get(dir) ?? []), file]);
  }
  for (const [dir, files] of byDir) {
    const lines = ["// Generated by scripts/gen-proto.mjs. Do not edit."];
    for (const file of files)
      lines.push(`export * from "./${file.slice(dir.length + 1).replace(/\.proto$/, "_pb.ts")}";`);
    writeFileSync(join(outDir, dir, "index.ts"), `${lines.join("\n")}\n`);
  }
}

function main() {
  const started = Date.now();
  const { sources, wellKnown } = collectClosure();
  const hash = inputHash(sources);
  const upToDate = existsSync(stampFile) && readFileSync(stampFile, "utf8").trim() === hash;
  if (upToDate && existsSync(join(outDir, "files.ts"))) {
    console.log(`gen-proto: ${sources.size} files unchanged, skipped`);
    return;
  }

  rmSync(stageDir, { recursive: true, force: true });
  for (const [file, text] of sources) {
    mkdirSync(dirname(join(stageDir, file)), { recursive: true });
    writeFileSync(join(stageDir, file), text);
  }
  rmSync(outDir, { recursive: true, force: true });

  const buf = join(repo, "node_modules/.bin/buf");
  const result = spawnSync(buf, ["generate", "--template", "buf.gen.yaml", "build/proto"], {
    cwd: repo,
    stdio: "inherit",
    // The local plugin is found on PATH; BUF_CACHE_DIR keeps buf's cache inside the build folder.
    env: {
      ...process.env,
      PATH: `${join(repo, "node_modules/.bin")}:${process.env.PATH}`,
      BUF_CACHE_DIR: join(repo, "build/buf-cache"),
    },
  });
  if (result.status !== 0) {
    console.error(`gen-proto: buf generate failed (${result.error ?? `exit ${result.status}`})`);
    process.exit(1);
  }

  writeFileIndex(sources, wellKnown);
  writePackageIndexes(sources);
  writeFileSync(stampFile, `${hash}\n`);
  console.log(`gen-proto: generated ${sources.size} files into src/api/gen in ${Date.now() - started} ms`);
}

main();
