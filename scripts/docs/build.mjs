// `npm run docs`: the API reference of the library's entry points (sluice/api, sluice/kube, sluice/xds),
// built by TypeDoc into build/api-reference/, with docs/library.md as its front page. TypeDoc's own
// tools are installed here (package.json beside this file), since TypeDoc needs TypeScript's JavaScript
// API, which the project's TypeScript 7 lacks. A type the public API reaches but does not export is an
// error, except in the Envoy bindings generated from protos (src/api/gen), which re-export only the
// packages Sluice builds config with.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const install = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], {
  cwd: here,
  stdio: "inherit",
});
if (install.status !== 0) {
  console.error("docs: npm ci of scripts/docs (TypeDoc) failed");
  process.exit(1);
}
const typedoc = spawnSync(join(here, "node_modules/.bin/typedoc"), ["--options", join(here, "typedoc.json")], {
  cwd: here,
  encoding: "utf8",
  env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
});
const lines = `${typedoc.stdout}${typedoc.stderr}`.split("\n");
const problems = lines.filter(
  (l) => /^\[(warning|error)\] /.test(l) && !l.includes("/src/api/gen/") && !/\] Found \d+ errors/.test(l),
);
for (const line of lines.filter((l) => l.startsWith("[info]"))) console.log(line);
for (const problem of problems) console.error(problem);
if (typedoc.status !== 0 || problems.length > 0) {
  console.error(`docs: TypeDoc exited ${typedoc.status} with ${problems.length} problems in Sluice's own API`);
  process.exit(1);
}
