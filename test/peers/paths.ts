// Where the reference programs built by `npm run peers` (scripts/peers.ts) live, and whether they
// are there. The pins are in versions.json beside this file; each program is built into
// <root>/<name>-<version>/<name> with a stamp.json whose key is the hash of its recipe (and, for our
// own Go program, of its sources), so a changed pin or source reads as "not built".
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** One program of versions.json. */
export interface PeerProgram {
  name: string;
  /** The Go module that holds the program (for `dir` programs: the pinned dependency). */
  module: string;
  version: string;
  /** The main package, a full import path (or "." for a `dir` program). */
  package: string;
  /** Our own Go module in the repo, relative to the repo root. */
  dir?: string;
  /** The version of the staging modules that `module`'s go.mod replaces with local folders. */
  stagingVersion?: string;
  ldflags?: string[];
  /** GOTOOLCHAIN for this build (default: the machine's go, GOTOOLCHAIN=local). */
  toolchain?: string;
  /** Arguments that make the program print its version (the build runs it to check it). */
  versionArgs?: string[];
}

/** What scripts/peers.ts writes beside a binary once it is built and answers `versionArgs`. */
export interface PeerStamp {
  key: string;
  name: string;
  version: string;
  go: string;
  builtAt: string;
  seconds: number;
  versionOutput: string;
}

/** Bump when the build recipe in scripts/peers.ts changes in a way that changes the binaries. */
export const RECIPE_REVISION = 1;

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const VERSIONS_FILE = join(REPO_ROOT, "test/peers/versions.json");

export function peerPrograms(): PeerProgram[] {
  return (JSON.parse(readFileSync(VERSIONS_FILE, "utf8")) as { programs: PeerProgram[] }).programs;
}

export function peerProgram(name: string): PeerProgram {
  const p = peerPrograms().find((q) => q.name === name);
  if (!p) throw new Error(`no peer program ${JSON.stringify(name)} in ${VERSIONS_FILE}`);
  return p;
}

/** The cache root: $SLUICE_PEERS_DIR, else ~/.cache/sluice/peers. */
export function peersRoot(): string {
  const override = process.env.SLUICE_PEERS_DIR;
  if (override) return resolve(override);
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "sluice", "peers");
}

export function peerDir(p: PeerProgram): string {
  return join(peersRoot(), `${p.name}-${p.version}`);
}

export function peerBinary(p: PeerProgram): string {
  return join(peerDir(p), p.name);
}

export function stampFile(p: PeerProgram): string {
  return join(peerDir(p), "stamp.json");
}

/** Our own Go module's files that go into a build, sorted (go.mod, go.sum, *.go). */
export function sourceFiles(p: PeerProgram): string[] {
  if (!p.dir) return [];
  const root = join(REPO_ROOT, p.dir);
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const f = join(d, e.name);
      if (e.isDirectory()) walk(f);
      else if (e.name === "go.mod" || e.name === "go.sum" || e.name.endsWith(".go")) out.push(f);
    }
  };
  walk(root);
  return out.sort();
}

/** The hash a stamp must carry for the binary to count as built from the current pins. */
export function recipeKey(p: PeerProgram): string {
  const h = createHash("sha256");
  h.update(`recipe ${RECIPE_REVISION}\n${JSON.stringify(p)}\n`);
  for (const f of sourceFiles(p)) h.update(`${f.slice(REPO_ROOT.length)}\n`).update(readFileSync(f));
  return h.digest("hex").slice(0, 16);
}

export function readStamp(p: PeerProgram): PeerStamp | undefined {
  try {
    return JSON.parse(readFileSync(stampFile(p), "utf8")) as PeerStamp;
  } catch {
    return undefined;
  }
}

export interface PeerStatus {
  name: string;
  path: string;
  /** Why the program can't be used; undefined when it is built from the current pins. */
  missing?: string;
}

export function peerStatus(name: string): PeerStatus {
  const p = peerProgram(name);
  const path = peerBinary(p);
  if (!existsSync(path)) return { name, path, missing: `${name} is not built (no ${path})` };
  const stamp = readStamp(p);
  if (!stamp) return { name, path, missing: `${name} has no stamp (${stampFile(p)})` };
  if (stamp.key !== recipeKey(p)) return { name, path, missing: `${name} was built from other pins or sources` };
  return { name, path };
}

/** The program's path, or undefined when it isn't built from the current pins. */
export function peerPath(name: string): string | undefined {
  const s = peerStatus(name);
  return s.missing ? undefined : s.path;
}

/** The program's path; throws, naming `npm run peers`, when it isn't built. */
export function requirePeer(name: string): string {
  const s = peerStatus(name);
  if (s.missing) throw new Error(`${s.missing}: run \`npm run peers\``);
  return s.path;
}

/**
 * For a test that needs `names`: undefined when all are built; otherwise one line to skip with,
 * naming `npm run peers`. On CI (CI=true) a missing program is an error, never a skip.
 */
export function peersSkipReason(...names: string[]): string | undefined {
  const missing = names.map(peerStatus).filter((s) => s.missing);
  if (missing.length === 0) return undefined;
  const line = `${missing.map((s) => s.name).join(", ")} not built: run \`npm run peers\``;
  if (process.env.CI === "true") {
    throw new Error(`${line} (CI=true: missing peers fail) — ${missing.map((s) => s.missing).join("; ")}`);
  }
  return line;
}
