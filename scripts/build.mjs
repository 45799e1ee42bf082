// `npm run build` (and `prepare`): compiles src/ to dist/ (JavaScript, declarations, source maps),
// starting from the entry points in tsconfig.build.json so that only what ships is compiled (no tests,
// no test helpers), copies the data files the code reads beside itself, and records the commit built.
import { spawnSync } from "node:child_process";
import { cpSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(repo, "dist");

rmSync(dist, { recursive: true, force: true });
const tsc = join(repo, "node_modules/.bin/tsc");
const compile = spawnSync(tsc, ["-p", join(repo, "tsconfig.build.json")], { stdio: "inherit" });
if (compile.status !== 0) process.exit(compile.status ?? 1);

// The CRD schemas, read at run time from beside src/config/schema/index.ts.
cpSync(join(repo, "src/config/schema/generated"), join(dist, "config/schema/generated"), { recursive: true });

// The commit `sluice version` reports: none when built outside a git checkout (an unpacked tarball).
const git = spawnSync("git", ["rev-parse", "HEAD"], { cwd: repo, encoding: "utf8" });
const commit = git.status === 0 ? git.stdout.trim() : "unknown";
writeFileSync(join(dist, "build-info.json"), `${JSON.stringify({ commit }, null, 2)}\n`);
