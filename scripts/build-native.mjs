// `npm run build` (and so `npm ci`'s prepare): builds native/, the Node-API addons for SOCK_SEQPACKET
// sockets with descriptor passing (src/agent/seqpacket.ts) and for glibc's malloc_trim
// (src/util/malloc-trim.ts), with node-gyp into native/build/.
// node-gyp would download Node's headers, which this project's machines cannot; the headers of the
// Node running this script are used instead, from its installation (<prefix>/include/node: Debian's and
// NodeSource's packages, the official tarballs and nvm all lay them there). node-gyp is npm's own
// (npm names it to the scripts it runs in npm_config_node_gyp), so the project has no dependency for it.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const nodeDir = join(dirname(process.execPath), "..");
const nodeGyp =
  process.env.npm_config_node_gyp ?? join(nodeDir, "lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js");

if (!existsSync(join(nodeDir, "include/node/node_api.h"))) {
  fail(`Node's headers are not installed beside ${process.execPath} (no ${join(nodeDir, "include/node")})`);
}
if (!existsSync(nodeGyp)) fail(`npm's node-gyp is not at ${nodeGyp}: run the build with npm run build`);

const built = spawnSync(process.execPath, [nodeGyp, "rebuild", `--nodedir=${nodeDir}`, "--loglevel=warn"], {
  cwd: join(repo, "native"),
  stdio: "inherit",
});
if (built.status !== 0) fail(`node-gyp exited with ${built.status ?? built.signal}`);

function fail(why) {
  console.error(`build-native: cannot build native/ (the seqpacket and memory addons): ${why}`);
  process.exit(1);
}
