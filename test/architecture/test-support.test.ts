// Test support lives under test/, product code under src/ (docs/ARCHITECTURE.md, "Tests and
// benchmarks"): no module of src/ but a unit test imports from outside src/ (test/, bench/, scripts/)
// or node:assert (product code throws Errors that say what is wrong), every other module of src/ is
// reached from what ships (the programs and workers that scripts/build.mjs bundles, the library entry
// points of tsconfig.build.json), so none sits in src/ only for tests, and no file named as test
// support (test-*.ts, testing.ts, golden.ts, free-port.ts, *fixtures.ts) is left in src/.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** Source files by repository-relative path (with `/`), and the entry points of what ships. */
export interface SourceTree {
  files: ReadonlyMap<string, string>;
  roots: readonly string[];
}

// Generated code: not written by hand, and its files are reached or not as the generator decides.
const GENERATED = ["src/api/gen/"];
const TEST_SUPPORT_NAME = /^(test-.*|testing|golden|free-port|.*fixtures)\.ts$/;
const NODE_ASSERT = /\bfrom\s*["'](node:)?assert(\/strict)?["']|\bimport\(\s*["'](node:)?assert(\/strict)?["']/;

const isUnitTest = (path: string) => path.endsWith(".test.ts");
const isProduct = (path: string) =>
  path.startsWith("src/") && !isUnitTest(path) && !GENERATED.some((prefix) => path.startsWith(prefix));

/** The relative specifiers a module imports (static, dynamic, re-exports) or loads as a worker. */
function specifiers(text: string): string[] {
  const found: string[] = [];
  const statements = /(?:^|[\n;])\s*(?:import|export)\s[^;]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']/g;
  const bare = /(?:^|[\n;])\s*import\s*["'](\.{1,2}\/[^"']+)["']/g;
  const dynamic = /\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;
  // `new URL("./judge-worker.ts", import.meta.url)`, also with a computed extension (`${ext}`).
  // Other files read by URL (package.json, schemas) are data, not modules.
  const urls = /\bnew URL\(\s*[`"'](\.{1,2}\/[^`"'$]+?)(?:(\.ts|\.js)[`"']|\$\{)/g;
  for (const re of [statements, bare, dynamic]) for (const m of text.matchAll(re)) found.push(m[1]);
  for (const m of text.matchAll(urls)) found.push(m[1] + (m[2] ?? ".ts"));
  return found;
}

/** The repository paths a module's relative imports resolve to (`.js` read as the `.ts` beside it). */
function importsOf(path: string, text: string, files: ReadonlyMap<string, string>): string[] {
  return specifiers(text).map((spec) => {
    const target = posix.normalize(posix.join(posix.dirname(path), spec));
    const ts = target.replace(/\.js$/, ".ts");
    return !files.has(target) && files.has(ts) ? ts : target;
  });
}

/** Every way the tree breaks the rule, one line each (none when it holds). */
export function testSupportProblems(tree: SourceTree): string[] {
  const problems: string[] = [];
  for (const root of tree.roots) if (!tree.files.has(root)) problems.push(`entry point ${root} does not exist`);
  for (const [path, text] of tree.files) {
    if (!isProduct(path)) continue;
    for (const target of importsOf(path, text, tree.files)) {
      if (!target.startsWith("src/")) problems.push(`${path} imports ${target}, outside src/`);
    }
    if (NODE_ASSERT.test(text)) problems.push(`${path} imports node:assert, which is for tests`);
    if (TEST_SUPPORT_NAME.test(posix.basename(path))) {
      problems.push(`${path} is named as test support: move it under test/support/`);
    }
  }
  // What ships: the entry points and whatever product modules they reach; unit tests reach nothing.
  const reached = new Set<string>();
  const pending = tree.roots.filter((root) => tree.files.has(root));
  while (pending.length > 0) {
    const path = pending.pop() as string;
    if (reached.has(path)) continue;
    reached.add(path);
    for (const target of importsOf(path, tree.files.get(path) ?? "", tree.files)) {
      if (tree.files.has(target) && target.startsWith("src/") && !isUnitTest(target)) pending.push(target);
    }
  }
  for (const path of tree.files.keys()) {
    if (isProduct(path) && !reached.has(path)) {
      problems.push(`${path} is not reached from any entry point (only tests use it?): move it under test/support/`);
    }
  }
  return problems;
}

function sourceFiles(dir: string, out: Map<string, string>): Map<string, string> {
  for (const entry of readdirSync(join(REPO, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (entry.name.endsWith(".ts")) out.set(path, readFileSync(join(REPO, path), "utf8"));
  }
  return out;
}

/** The entry points of the build: the bundled programs and workers, and the library's compiled files. */
function shippedEntryPoints(): string[] {
  const build = readFileSync(join(REPO, "scripts/build.mjs"), "utf8");
  const bundled = /const entries = \[([^\]]*)\]/.exec(build);
  assert.ok(bundled, "scripts/build.mjs: no `const entries = [...]` naming the bundled programs");
  const programs = [...bundled[1].matchAll(/"([^"]+)"/g)].map((m) => `src/${m[1]}`);
  const library = (JSON.parse(readFileSync(join(REPO, "tsconfig.build.json"), "utf8")) as { files: string[] }).files;
  assert.ok(programs.length > 0 && library.length > 0, "no entry points found");
  return [...programs, ...library];
}

test("no product module in src/ imports test support or node:assert, is there only for tests, or is named as test support", () => {
  assert.deepEqual(testSupportProblems({ files: sourceFiles("src", new Map()), roots: shippedEntryPoints() }), []);
});

test("the check finds each kind of misplaced test support", () => {
  const files = new Map([
    ["src/bin/main.ts", 'import { b } from "../b.ts";\nimport "../d/testing.ts";\n'],
    ["src/b.ts", 'import type { X } from "../test/support/x.ts";\nimport assert from "node:assert/strict";\n'],
    ["src/c.ts", "export const c = 1;\n"],
    [
      "src/c.test.ts",
      'import assert from "node:assert";\nimport { c } from "./c.ts";\nimport { x } from "../test/support/x.ts";\n',
    ],
    ["src/d/testing.ts", "export {};\n"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a module's source text, not a template
    ["src/w.ts", 'new Worker(new URL(`./w-worker${ext}`, import.meta.url));\nconst m = await import("./e.js");\n'],
    ["src/w-worker.ts", "export {};\n"],
    ["src/e.ts", "export {};\n"],
    ["src/api/gen/unused_pb.ts", "export {};\n"],
    ["test/support/x.ts", "export const x = 1;\n"],
  ]);
  assert.deepEqual(testSupportProblems({ files, roots: ["src/bin/main.ts", "src/w.ts", "src/gone.ts"] }), [
    "entry point src/gone.ts does not exist",
    "src/b.ts imports test/support/x.ts, outside src/",
    "src/b.ts imports node:assert, which is for tests",
    "src/d/testing.ts is named as test support: move it under test/support/",
    "src/c.ts is not reached from any entry point (only tests use it?): move it under test/support/",
  ]);
});
