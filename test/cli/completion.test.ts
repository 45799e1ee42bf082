// `sluice completion bash|zsh`: the scripts, run for real in bash against the real CLI.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));

function sluice(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [SLUICE, ...args], { encoding: "utf8", env: { ...process.env, ...env } });
}

/** A directory holding a `sluice` command, as an installed CLI would be on PATH. */
function sluiceOnPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "sluice-path-"));
  const shim = join(dir, "sluice");
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${SLUICE}" "$@"\n`);
  chmodSync(shim, 0o755);
  return dir;
}

/** What bash offers after the words typed so far (the last one being completed). */
function bashCompletes(pathDir: string, words: string[]): string[] {
  const script = [
    "source <(sluice completion bash)",
    `COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")})`,
    `COMP_CWORD=${words.length - 1}`,
    "_sluice_completions",
    `printf "%s\\n" "\${COMPREPLY[@]}"`,
  ].join("\n");
  const run = spawnSync("bash", ["-c", script], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${pathDir}:${process.env.PATH ?? ""}` },
  });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.split("\n").filter(Boolean).sort();
}

test("the bash script completes commands, subcommands and flags from the CLI itself", () => {
  const dir = sluiceOnPath();
  assert.deepEqual(bashCompletes(dir, ["sluice", "prox"]), ["proxy-config", "proxy-status"]);
  assert.deepEqual(bashCompletes(dir, ["sluice", "proxy-config", "cl"]), ["cluster"]);
  assert.deepEqual(bashCompletes(dir, ["sluice", "x", "tr"]), ["translate"]);
  assert.deepEqual(bashCompletes(dir, ["sluice", "way"]), ["waypoint"]);
  assert.deepEqual(bashCompletes(dir, ["sluice", "waypoint", "a"]), ["apply"]);
  assert.deepEqual(bashCompletes(dir, ["sluice", "ztunnel-config", "c"]), ["certificate", "connections"]);
  assert.ok(bashCompletes(dir, ["sluice", "waypoint", "apply", "--enr"]).includes("--enroll-namespace"));
  assert.ok(bashCompletes(dir, ["sluice", "analyze", "--all-"]).includes("--all-namespaces"));
});

test("the zsh script is a compdef asking for zsh's word:description answers, which the CLI gives", () => {
  const run = sluice(["completion", "zsh"]);
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^#compdef sluice$/m);
  assert.match(run.stdout, /SHELL=zsh sluice --get-yargs-completions/);
  const answers = sluice(["--get-yargs-completions", "sluice", ""], { SHELL: "/bin/zsh" }).stdout.split("\n");
  assert.ok(
    answers.some((line) => /^proxy-status:.+/.test(line)),
    answers.join("\n"),
  );
});

test("an unknown shell is a usage error naming the choices", () => {
  const run = sluice(["completion", "fish"]);
  assert.equal(run.status, 2);
  assert.match(run.stderr, /Choices: "bash", "zsh"/);
});
