// `npm run docs` builds the API reference of the library's entry points, and fails on a type the
// public API reaches without exporting it.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const OUT = join(ROOT, "build/api-reference");

test("npm run docs builds a reference page for each entry point's main exports", () => {
  const run = spawnSync("npm", ["run", "docs"], { cwd: ROOT, encoding: "utf8" });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  for (const page of [
    "classes/xds.DiscoveryServer.html",
    "functions/xds.translate.html",
    "functions/api.validateObject.html",
    "functions/kube.istioClients.html",
    "classes/kube.KubeApiError.html",
  ]) {
    assert.ok(existsSync(join(OUT, page)), `${page} is built`);
  }
  const server = readFileSync(join(OUT, "classes/xds.DiscoveryServer.html"), "utf8");
  assert.match(server, /setResources/, "methods are documented");
  assert.match(
    readFileSync(join(OUT, "index.html"), "utf8"),
    /Sluice as a library/,
    "docs/library.md is the front page",
  );
});
