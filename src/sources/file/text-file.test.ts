import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { watchTextFile } from "./text-file.ts";

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), `timed out waiting for ${what}`);
};

test("a rewritten file is read again; an unchanged rewrite tells nothing", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-text-file-"));
  const file = join(dir, "mesh");
  writeFileSync(file, "a: 1\n");
  const seen: (string | undefined)[] = [];
  const w = watchTextFile(file, (t) => seen.push(t), { debounceMs: 10 });
  try {
    writeFileSync(file, "a: 2\n");
    await until(() => seen.length === 1, "the new text");
    writeFileSync(file, "a: 2\n");
    writeFileSync(join(dir, "other"), "x");
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(seen, ["a: 2\n"]);
  } finally {
    w.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a ConfigMap mount's symlink swap is seen", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-text-file-"));
  // As the kubelet lays out a ConfigMap volume: mesh -> ..data/mesh, ..data -> a timestamped directory.
  mkdirSync(join(dir, "..v1"));
  writeFileSync(join(dir, "..v1", "mesh"), "a: 1\n");
  symlinkSync("..v1", join(dir, "..data"));
  symlinkSync(join("..data", "mesh"), join(dir, "mesh"));
  const seen: (string | undefined)[] = [];
  const w = watchTextFile(join(dir, "mesh"), (t) => seen.push(t), { debounceMs: 10 });
  try {
    mkdirSync(join(dir, "..v2"));
    writeFileSync(join(dir, "..v2", "mesh"), "a: 2\n");
    symlinkSync("..v2", join(dir, "..data_tmp"));
    renameSync(join(dir, "..data_tmp"), join(dir, "..data"));
    await until(() => seen.length === 1, "the swapped text");
    assert.deepEqual(seen, ["a: 2\n"]);
  } finally {
    w.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
