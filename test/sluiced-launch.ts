// How bin/sluiced.js runs sluiced: the environment and node flags its first line sets. Harnesses that
// start `node <flags of their own> bin/sluiced.js` add these, so that they run sluiced as users do.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const SLUICED = fileURLToPath(new URL("../bin/sluiced.js", import.meta.url));

export interface SluicedLaunch {
  env: Record<string, string>;
  nodeArgs: string[];
}

/** Parses `#!/usr/bin/env -S NAME=VALUE... node FLAG...`, the only form bin/sluiced.js uses. */
export function sluicedLaunch(): SluicedLaunch {
  const first = readFileSync(SLUICED, "utf8").split("\n", 1)[0];
  const prefix = "#!/usr/bin/env -S ";
  if (!first.startsWith(prefix)) throw new Error(`${SLUICED}: first line is not "${prefix}...": ${first}`);
  const words = first.slice(prefix.length).trim().split(/\s+/);
  const node = words.indexOf("node");
  if (node < 0) throw new Error(`${SLUICED}: first line runs no node: ${first}`);
  const env: Record<string, string> = {};
  for (const word of words.slice(0, node)) {
    const eq = word.indexOf("=");
    if (eq <= 0) throw new Error(`${SLUICED}: "${word}" before node is not NAME=VALUE`);
    env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return { env, nodeArgs: words.slice(node + 1) };
}
