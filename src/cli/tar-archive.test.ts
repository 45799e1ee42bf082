// The bug report's archive writer: read back by test/support's reader and by the system's tar.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { readGzipTar } from "../../test/support/tar.ts";
import { gzipTar } from "./tar-archive.ts";

/** Fits no ustar split: a pax path. */
const LONG = `bug-report/proxies/${"n".repeat(63)}/${"p".repeat(120)}/config_dump?include_eds`;
/** Over 100 bytes: split into ustar's prefix and name. */
const SPLIT = `bug-report/proxies/${"n".repeat(60)}/${"p".repeat(60)}/stats/prometheus`;
/** With a component that fits neither field: a pax path. */
const LONGER = `bug-report/${"x".repeat(120)}/${"y".repeat(120)}`;
const ENTRIES = [
  { path: "bug-report/cluster/k8s-resources", data: "apiVersion: v1\nitems: []\nkind: List\n" },
  { path: "bug-report/istio/istio-system/istiod-1/debug/configz", data: "[]" },
  { path: "bug-report/empty", data: "" },
  { path: SPLIT, data: "# TYPE x counter\n" },
  { path: LONG, data: Buffer.alloc(1000, 7) },
  { path: LONGER, data: "é\n" },
];

test("entries read back with their paths and data, directories before their files", () => {
  const entries = readGzipTar(gzipTar(ENTRIES));
  assert.deepEqual(
    entries.filter((e) => e.type === "0").map((e) => [e.path, e.data.toString("base64")]),
    ENTRIES.map((e) => [e.path, Buffer.from(e.data).toString("base64")]),
  );
  const paths = entries.map((e) => e.path);
  assert.deepEqual(paths.slice(0, 3), ["bug-report/", "bug-report/cluster/", "bug-report/cluster/k8s-resources"]);
  assert.equal(paths.filter((p) => p === "bug-report/").length, 1);
});

test("the system's tar lists and extracts the archive", { skip: hasTar() ? false : "no tar here" }, () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-tar-"));
  try {
    const file = join(dir, "a.tar.gz");
    writeFileSync(file, gzipTar(ENTRIES));
    const listed = execFileSync("tar", ["-tzf", file], { encoding: "utf8" }).split("\n").filter(Boolean);
    for (const e of ENTRIES) assert.ok(listed.includes(e.path), `${e.path} in ${listed.join(", ")}`);
    execFileSync("tar", ["-xzf", file, "-C", dir]);
    assert.equal(readFileSync(join(dir, LONGER), "utf8"), "é\n");
    assert.equal(readFileSync(join(dir, LONG)).length, 1000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function hasTar(): boolean {
  try {
    execFileSync("tar", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
