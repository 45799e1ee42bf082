import assert from "node:assert/strict";
import { test } from "node:test";
import { declaredFlagNames, unknownCommandLineFlags } from "./flags.ts";

const declared = declaredFlagNames({
  key: { filename: true, output: true, "dry-run": true },
  alias: { filename: ["f"], output: ["o"] },
});

test("declaredFlagNames holds keys, aliases, camelCase spellings and help", () => {
  for (const name of ["filename", "f", "output", "o", "dry-run", "dryRun", "help", "h"]) {
    assert.ok(declared.has(name), name);
  }
  assert.equal(declared.has("x"), false);
});

test("unknownCommandLineFlags finds undeclared flags typed on the command line", () => {
  const args = ["validate", "-f", "-", "--output=json", "--no-dry-run", "-ofoo", "--fileame", "x", "-z", "-5"];
  assert.deepEqual(unknownCommandLineFlags(args, declared), ["fileame", "z"]);
  assert.deepEqual(unknownCommandLineFlags(["--", "--anything"], declared), []);
});
