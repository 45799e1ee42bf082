// `npm run build` (and `prepare`): compiles the library's entry points (tsconfig.build.json) to dist/
// (JavaScript and declarations, so that only what ships is compiled: no tests, no test helpers), copies
// the data files the code reads beside itself, records the commit built, and bundles the programs (see
// bundlePrograms).
import { spawnSync } from "node:child_process";
import { cpSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(repo, "dist");

rmSync(dist, { recursive: true, force: true });
const tsc = join(repo, "node_modules/.bin/tsc");
const compile = spawnSync(tsc, ["-p", join(repo, "tsconfig.build.json")], { stdio: "inherit" });
if (compile.status !== 0) process.exit(compile.status ?? 1);

// The CRD schemas, read at run time from beside src/config/schema/index.ts.
const schemas = join(repo, "src/config/schema/generated");
cpSync(schemas, join(dist, "config/schema/generated"), { recursive: true });

// The commit `sluice version` reports: none when built outside a git checkout (an unpacked tarball).
const git = spawnSync("git", ["rev-parse", "HEAD"], { cwd: repo, encoding: "utf8" });
const commit = git.status === 0 ? git.stdout.trim() : "unknown";
writeFileSync(join(dist, "build-info.json"), `${JSON.stringify({ commit }, null, 2)}\n`);

await bundlePrograms();

// The three programs, bundled by esbuild from src/ and split into shared chunks, each lazy import its
// own chunk (so `sluice version` loads only what it needs). Loading the compiled modules one by one
// took a fifth of `sluice version`'s start-up (yargs' thirty-odd modules) and a quarter of sluiced's
// (the several hundred modules of the generated protobuf bindings); see BENCHMARKS.md. Packages stay
// external, since some read files beside themselves, except yargs and @kubernetes/client-node (see
// bundleYargsAndKubeClient). The bundle sits one level below dist/, as its source files sit below src/,
// so that their relative reads (package.json, build-info.json) still resolve; the CRD schemas are
// copied beside it, and the file source's judging worker is an entry of its own there.
async function bundlePrograms() {
  const out = join(dist, "bundle");
  const entries = ["bin/sluice.ts", "bin/sluiced.ts", "bin/sluice-agent.ts", "sources/file/judge-worker.ts"];
  await build({
    entryPoints: entries.map((entry) => join(repo, "src", entry)),
    outdir: out,
    entryNames: "[name]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: "warning",
    plugins: [bundleYargsAndKubeClient()],
  });
  cpSync(schemas, join(out, "generated"), { recursive: true });
}

/**
 * Packages imported by Sluice's code stay external, except yargs (with what it imports) and
 * @kubernetes/client-node (without what it imports). client-node's index loads its whole generated API,
 * hundreds of modules and ~27 MiB of heap, of which sluiced uses a few classes; bundled, only those
 * are kept (~9 MiB). Its dependencies stay external (several are CommonJS, which an ESM bundle cannot
 * require), imported by name from the bundle: so they are sluice's own dependencies too, at the
 * versions client-node gets (test/package/pack.test.ts checks every package the bundle imports is one).
 */
function bundleYargsAndKubeClient() {
  const bundled = /^(yargs|@kubernetes\/client-node)(\/|$)/;
  return {
    name: "bundle-yargs-and-kube-client",
    setup(builder) {
      builder.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith("node:")) return { external: true };
        if (bundled.test(args.path)) return undefined;
        const fromPackage = args.importer.includes("/node_modules/");
        if (fromPackage && !args.importer.includes("/node_modules/@kubernetes/client-node/")) return undefined;
        return { external: true };
      });
    },
  };
}
