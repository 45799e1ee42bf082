// The package as users get it: `npm pack` (the compiled dist/, no sources, tests or test helpers),
// installed into an empty folder, and its three programs run from there; docs/library.md's
// sluice/kube example runs against the test cluster (test/cluster). `npm test` builds dist/
// before the tests run; the install takes the dependencies from npm's cache (npm ci filled it) and
// reaches the registry only for what is missing.
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { clusterSkipReason, sharedCluster } from "../cluster/index.ts";

const skip = clusterSkipReason();

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TSX = import.meta.resolve("tsx");
const TSC = join(ROOT, "node_modules/.bin/tsc");
const MESH = join(ROOT, "examples/mesh");
const work = mkdtempSync(join(tmpdir(), "sluice-pack-"));
const app = join(work, "app");
let tarball = "";
/** A TypeScript example of docs/library.md and the output it prints. */
const EXAMPLE = /```ts\n(.*?)```\n\nprints\n\n```text\n(.*?)```/gs;
let packedFiles: string[] = [];

/** Runs an installed program from the app folder, as `npx <bin>` would. */
function runBin(bin: string, args: string[]) {
  return spawnSync(join(app, "node_modules/.bin", bin), args, {
    cwd: app,
    encoding: "utf8",
    env: { ...process.env, HOME: work },
    // `sluice install --dry-run` prints the CRDs: over a megabyte.
    maxBuffer: 16 << 20,
  });
}

/** Runs a program in the app folder without blocking this process's event loop. */
function runAsync(command: string, args: string[], env: Record<string, string>) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { cwd: app, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("the packed package", () => {
  before(() => {
    // --ignore-scripts: dist/ is already built (npm test's build step); prepare would build it again.
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
        cwd: ROOT,
        encoding: "utf8",
      }),
    ) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, packed[0].filename);
    packedFiles = packed[0].files.map((f) => f.path);
    execFileSync("mkdir", ["-p", app]);
    writeFileSync(join(app, "package.json"), `${JSON.stringify({ name: "app", private: true, type: "module" })}\n`);
    execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], {
      cwd: app,
      stdio: ["ignore", "ignore", "inherit"],
    });
  });

  test("ships the compiled programs and nothing of the sources, tests or test helpers", () => {
    for (const path of [
      "package.json",
      "README.md",
      "bin/sluiced.js",
      "dist/bundle/sluiced.js",
      "dist/bundle/judge-worker.js",
      "dist/library/xds.js",
      "dist/library/xds.d.ts",
      "manifests/values.yaml",
      "manifests/crds/networking.istio.io_virtualservices.yaml",
    ]) {
      assert.ok(packedFiles.includes(path), `${path} is packed`);
    }
    const unwanted = packedFiles.filter(
      (path) =>
        path.startsWith("src/") ||
        path.startsWith("test/") ||
        /\.test\.(js|ts)$|testing\.js$|test-helpers|test-fixtures|test-inputs/.test(path),
    );
    assert.deepEqual(unwanted, []);
    // The installed package does not need a TypeScript loader.
    const manifest = JSON.parse(readFileSync(join(app, "node_modules/sluice/package.json"), "utf8"));
    assert.equal(manifest.dependencies.tsx, undefined);
  });

  test("every package the bundled programs import is one of the package's own dependencies", () => {
    // The bundle takes in @kubernetes/client-node but imports its dependencies by name: from
    // dist/bundle/ they resolve only if they are sluice's own (npm may nest a dependency's dependency,
    // pnpm hides it).
    const installed = join(app, "node_modules/sluice");
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    const bundle = join(installed, "dist/bundle");
    const imported = new Set<string>();
    for (const file of readdirSync(bundle).filter((f) => f.endsWith(".js"))) {
      const code = readFileSync(join(bundle, file), "utf8");
      for (const m of code.matchAll(
        /(?:\bfrom|\bimport\(?)\s*"((?:@[a-z0-9._-]+\/)?[a-z0-9][a-z0-9._-]*)(?:\/[^"]*)?"/g,
      )) {
        imported.add(m[1]);
      }
    }
    const builtin = (name: string) => name.startsWith("node:") || builtinModules.includes(name);
    const undeclared = [...imported].filter((name) => !builtin(name) && !(name in manifest.dependencies));
    assert.ok(imported.has("@bufbuild/protobuf") && imported.has("node-fetch"), [...imported].join(" "));
    assert.deepEqual(undeclared, []);
  });

  test("sluice install renders from the installed package's manifests", () => {
    const rendered = runBin("sluice", ["install", "--dry-run", "--set", "revision=blue"]);
    assert.equal(rendered.status, 0, rendered.stderr);
    assert.match(rendered.stdout, /^ {2}name: virtualservices.networking.istio.io$/m);
    assert.match(rendered.stdout, /^kind: Deployment\nmetadata:\n {2}name: istiod-blue$/m);
  });

  test("sluice validate and sluice x translate run from the installed package", () => {
    const valid = runBin("sluice", ["validate", "-f", join(MESH, "traffic.yaml")]);
    assert.equal(valid.status, 0, valid.stderr);
    const bad = join(work, "bad.yaml");
    writeFileSync(
      bad,
      "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: r, namespace: d}\nspec:\n  hosts: [r]\n  http:\n  - route:\n    - destination: {host: r}\n      weight: 4294967296\n",
    );
    const invalid = runBin("sluice", ["validate", "-f", bad]);
    assert.equal(invalid.status, 1);
    assert.match(invalid.stderr + invalid.stdout, /spec\.http\[0\]\.route\[0\]\.weight/);

    const translated = runBin("sluice", [
      "x",
      "translate",
      "-f",
      MESH,
      "--namespace",
      "bookinfo",
      "--labels",
      "app=productpage",
    ]);
    assert.equal(translated.status, 0, translated.stderr);
    assert.ok(JSON.parse(translated.stdout).configs.length > 0);
  });

  test("sluiced serves the example mesh from the installed package until /ready", async () => {
    const child: ChildProcess = spawn(
      join(app, "node_modules/.bin/sluiced"),
      [
        "--configDir",
        MESH,
        "--grpcAddr",
        "127.0.0.1:0",
        "--secureGRPCAddr",
        "",
        "--httpAddr",
        "127.0.0.1:0",
        "--monitoringAddr",
        "",
        "--httpsAddr",
        "",
      ],
      { cwd: app, stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let buffered = "";
        child.stdout?.on("data", (chunk: Buffer) => {
          buffered += chunk.toString();
          for (const line of buffered.split("\n")) {
            const match = /"httpPort":(\d+)/.exec(line);
            if (match) resolve(Number(match[1]));
          }
        });
        child.once("exit", (code) => reject(new Error(`sluiced exited (${code}) before listening`)));
      });
      let status = 0;
      for (let i = 0; i < 600 && status !== 200; i++) {
        status = await fetch(`http://127.0.0.1:${port}/ready`).then(
          (r) => r.status,
          () => 0,
        );
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(status, 200);
    } finally {
      child.kill("SIGTERM");
    }
  });

  test("every example of docs/library.md type-checks and prints what the docs say, importing the package by name", {
    skip,
  }, async () => {
    // The API server the sluice/kube examples talk to: the test cluster. The example works in
    // namespace "bookinfo", made here when absent; VirtualServices left there by an interrupted run
    // are deleted first, so the example's list shows its own.
    const cluster = await sharedCluster();
    const kubeconfig = join(work, "kubeconfig");
    cluster.writeKubeconfig(kubeconfig);
    const namespace = await cluster.request("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "bookinfo" },
    });
    assert.ok(namespace.status === 201 || namespace.status === 409, `namespace bookinfo: ${namespace.text}`);
    const cleared = await cluster.request("DELETE", "/apis/networking.istio.io/v1/namespaces/bookinfo/virtualservices");
    assert.equal(cleared.status, 200, `clearing bookinfo's VirtualServices: ${cleared.text}`);
    const examples = [...readFileSync(join(ROOT, "docs/library.md"), "utf8").matchAll(EXAMPLE)];
    assert.ok(examples.length >= 3, "the examples are found");
    const files = examples.map(([, code], i) => {
      const file = join(app, `example-${i}.ts`);
      writeFileSync(file, code);
      return file;
    });
    // As a TypeScript user would: strict, NodeNext, the package's own declarations.
    const tsconfig = {
      compilerOptions: {
        module: "NodeNext",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        lib: ["ES2023"],
        typeRoots: [join(ROOT, "node_modules/@types")],
        types: ["node"],
      },
      files,
    };
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(tsconfig));
    const checked = spawnSync(TSC, ["-p", join(app, "tsconfig.json")], { cwd: app, encoding: "utf8" });
    assert.equal(checked.status, 0, checked.stdout + checked.stderr);
    for (const [i, [, , expected]] of examples.entries()) {
      // Not spawnSync, which would stall this process's test timers.
      const run = await runAsync(process.execPath, ["--import", TSX, files[i]], { KUBECONFIG: kubeconfig });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout, expected, `example ${i + 1}'s output`);
    }
  });

  after(() => {
    spawnSync("rm", ["-rf", work]);
  });
});
