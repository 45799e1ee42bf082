// Runs the real `sluice kube-inject` on the webhook goldens' inputs: output, -o, stdin, messages, exit codes.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const SLUICE_BIN = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const testdata = fileURLToPath(new URL("../webhooks/testdata/", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "sluice-kube-inject-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, "home");
mkdirSync(home);
const baseEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !name.startsWith("SLUICE_") && name !== "XDG_CONFIG_HOME" && name !== "ENABLE_NATIVE_SIDECARS",
  ),
);

function sluice(args: string[], input?: string) {
  const result = spawnSync(process.execPath, [SLUICE_BIN, "kube-inject", ...args], {
    encoding: "utf8",
    env: { ...baseEnv, HOME: home },
    input,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test("writes the injected manifests to -o, with the values and mesh config given", () => {
  const out = join(dir, "values.out.yaml");
  const run = sluice([
    "-f",
    join(testdata, "values.yaml"),
    "--valuesFile",
    join(testdata, "values.values.yaml"),
    "-o",
    out,
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "");
  assert.equal(readFileSync(out, "utf8"), readFileSync(join(testdata, "values.yaml.injected"), "utf8"));

  const mesh = sluice(["-f", join(testdata, "mesh.yaml"), "--meshConfigFile", join(testdata, "mesh.mesh.yaml")]);
  assert.equal(mesh.code, 0, mesh.stderr);
  assert.equal(mesh.stdout, readFileSync(join(testdata, "mesh.yaml.injected"), "utf8"));
});

test("reads standard input and reports skipped workloads on standard error", () => {
  const run = sluice(["-f", "-"], readFileSync(join(testdata, "skipped.yaml"), "utf8"));
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, readFileSync(join(testdata, "skipped.yaml.injected"), "utf8"));
  assert.match(run.stderr, /===> Skipping injection because Deployment "host-net" has host networking enabled/);
});

test("native sidecars by flag", () => {
  const run = sluice(["-f", join(testdata, "native.yaml"), "--nativeSidecars"]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, readFileSync(join(testdata, "native.yaml.injected"), "utf8"));
});

test("exit codes: 2 for a missing file, 1 for a pod that cannot be injected", () => {
  assert.equal(sluice(["-f", join(dir, "absent.yaml")]).code, 2);
  const bad = `apiVersion: v1
kind: Pod
metadata:
  name: bad
  annotations:
    sidecar.istio.io/interceptionMode: MAGIC
spec:
  containers:
  - name: app
    image: app:1
`;
  const run = sluice(["-f", "-"], bad);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /^Error: failed to run injection template: .*interceptionMode invalid/s);
});
