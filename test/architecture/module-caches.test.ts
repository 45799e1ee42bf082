// No module of src/ keeps a cache of its own (issue 27, "Structure"): what the builders and generators
// memoise lives in the XdsCache the discovery server owns and passes down (src/configgen/cache/, the memo
// tables of src/util/memo.ts), or in the MemoStore a push lineage carries. test/architecture/module-caches.ts
// is the checker (what counts as a module-level cache is in its header); the tests below also show it
// finding made-up ones.
//
// ALLOWED names what may stay, each with why. They are not caches of config or of generated resources:
// they are computed from what ships with Sluice (the protobuf schemas, the CRD schemas) and are the same
// for every build, or they are process state rather than memos. A new entry needs as good a reason.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { readSources } from "./layers.ts";
import { findAllModuleCaches, findModuleCaches } from "./module-caches.ts";

/** `<path under src/>#<name>`, or `<folder under src/>/#<name>` for anywhere in that folder. */
const ALLOWED: Readonly<Record<string, string>> = {
  // Compiled from the generated protobuf schemas, per message schema or type URL: code and constants
  // made on first use, bounded by the schemas, identical for every build.
  "api/binary-encoder.ts#messageCodecs": "an encoder compiled per message schema",
  "api/binary-encoder.ts#encoders": "an encoder per message schema",
  "api/binary-encoder.ts#anyPrefixes": "the encoded type URL prefix of an Any, per type URL",
  "api/index.ts#typeUrls": "the type URL of each message schema",
  "api/pgv/check.ts#fieldRulesCache": "the PGV rules of each field descriptor",
  "api/pgv/check.ts#messageSkipCache": "whether each message descriptor is skipped by PGV",
  "api/pgv/check.ts#requiredOneofCache": "the required oneofs of each message descriptor",
  "api/pgv/check.ts#patternCache": "the compiled regular expression of each PGV pattern rule of the protos",
  // Compiled from the CRD schemas that ship with Sluice (src/config/schema/generated), per schema.
  "config/schema/index.ts#loaded": "the generated schemas, loaded once per file",
  "config/schema/structural.ts#patterns": "the compiled regular expression of each CRD schema pattern",
  "config/schema/cel.ts#programs": "the compiled CEL program of each CRD x-kubernetes-validations rule",
  // Process state, not memos of any input.
  "cli/log.ts#loggers": "the CLI's loggers, one per scope",
  "krt/scheduler.ts#waiting": "the scheduler's queue of pending work",
  // The watched-name sets live connections hold, weakly, so that watches naming the same share one
  // (as strings are interned): an index of what connections hold, computed from no config.
  "xds/server/name-sets.ts#sets": "the name sets live watches share, held weakly",
  // One live Gateway API conversion per service registry, which pushes and the status writer share:
  // wiring of the store to the model (model/store-push.ts), not a memo of generated config.
  "model/store-push.ts#conversions": "the live Gateway API conversion of each registry",
};

function allowed(file: string, name: string): boolean {
  return Object.keys(ALLOWED).some((entry) => {
    const [path, allowedName] = entry.split("#");
    return allowedName === name && (path.endsWith("/") ? file.startsWith(path) : file === path);
  });
}

const SRC = fileURLToPath(new URL("../../src", import.meta.url));

describe("module-level caches", () => {
  const files = readSources(SRC);
  const found = findAllModuleCaches(files);

  test("no module of src/ keeps a cache outside the cache objects (ALLOWED aside)", () => {
    const problems = found
      .filter((c) => !allowed(c.file, c.name))
      .map((c) => `src/${c.file}:${c.line} ${c.name}: ${c.why}; keep it in the Memos/XdsCache the caller passes`);
    assert.deepEqual(problems, [], `\n${problems.join("\n")}\n`);
  });

  test("every ALLOWED entry still names a module-level cache (no stale exemptions)", () => {
    const stale = Object.keys(ALLOWED).filter((entry) => {
      const [path, name] = entry.split("#");
      return !found.some((c) => c.name === name && (path.endsWith("/") ? c.file.startsWith(path) : c.file === path));
    });
    assert.deepEqual(stale, []);
  });

  test("the check reads the real tree (not an empty one)", () => {
    assert.ok(files.size > 500, `only ${files.size} files under src/`);
    assert.ok(files.has("configgen/cache/xds-cache.ts"));
  });
});

describe("the checker, on made-up sources", () => {
  const MADE_UP = `
import { NameMemo } from "../util/name-memo.ts";
import { resourceCache } from "./push-cache.ts";

// A constant table: built once, never written.
const PROTOCOLS: ReadonlyMap<string, number> = new Map([["http", 1], ["tcp", 2]]);
const RESERVED = new Set(["a", "b"]);

// A memo: filled as the module runs.
const routeMatches = new WeakMap<object, string>();
export function routeMatchFor(match: object): string {
  let found = routeMatches.get(match);
  if (!found) {
    found = "m";
    routeMatches.set(match, found);
  }
  return found + PROTOCOLS.get("http") + RESERVED.has("a");
}

// Emptied by reassignment.
let bodies = new WeakMap<object, Uint8Array>();
export function forget(): void {
  bodies = new WeakMap();
}

// Written from another module (below).
export const shared = new Map<string, number>();

const names = new NameMemo((a, b, n) => a + b + n);
const clusters = resourceCache<string[]>("type", (c) => []);

class Encoder {
  static readonly compiled = new Map<string, () => void>();
  static of(name: string) {
    Encoder.compiled.set(name, () => {});
  }
}

// Descriptors hold nothing.
const TABLE = weakTable<object, string>("x/table");
`;
  const OTHER = `import { shared } from "./made-up.ts";\nshared.set("k", 1);\n`;

  test("finds the tables a module fills, its memo objects and factories, and no constant", () => {
    const found = findModuleCaches("made-up.ts", MADE_UP, new Map([["other.ts", OTHER]]));
    assert.deepEqual(
      found.map((c) => [c.name, c.why]),
      [
        ["routeMatches", "a module-level collection that is written"],
        ["bodies", "a module-level collection that is written"],
        ["shared", "a module-level collection that is written"],
        ["names", "a module-level NameMemo"],
        ["clusters", "a module-level memo from resourceCache()"],
        ["compiled", "a static collection that is written"],
      ],
    );
    assert.equal(found[0].line, 10);
  });

  test("an exported table nobody writes, and a local table inside a function, are not module-level caches", () => {
    const source = `export const KINDS = new Map([["a", 1]]);\nexport function f() {\n  const seen = new Set<string>();\n  seen.add("x");\n  return seen;\n}\n`;
    assert.deepEqual(
      findModuleCaches(
        "kinds.ts",
        source,
        new Map([["user.ts", `import { KINDS } from "./kinds.ts";\nKINDS.get("a");\n`]]),
      ),
      [],
    );
  });

  test("the repository check fails on a made-up module with a cache", () => {
    const files = new Map([["networking/route/made-up.ts", MADE_UP]]);
    const problems = findAllModuleCaches(files).filter((c) => !allowed(c.file, c.name));
    assert.ok(problems.length > 0);
    assert.ok(problems.some((c) => c.file === "networking/route/made-up.ts" && c.name === "routeMatches"));
  });
});
