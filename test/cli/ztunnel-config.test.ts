// `sluice ztunnel-config --file` against istioctl's ztunnel-config: both read the same ztunnel config
// dumps (the fixtures beside this test: lists as ztunnel writes them now, maps as older ztunnels
// did, with the odd shapes istioctl's decoder accepts; and Istio's own writer test dump when the Go
// module cache has it) and print every part as a table, JSON and YAML; their stdout, stderr and exit
// status must be equal. Broken dumps must fail with the same words.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { peerProgram, peersSkipReason, requirePeer } from "../peers/paths.ts";

const skip = peersSkipReason("istioctl");
const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const FIXTURES = fileURLToPath(new URL("testdata/ztunnel/", import.meta.url));

interface Run {
  stdout: string;
  stderr: string;
  code: number;
}

function run(tool: "istioctl" | "sluice", args: string[]): Promise<Run> {
  const [file, prefix] = tool === "istioctl" ? [requirePeer("istioctl"), []] : [process.execPath, [SLUICE]];
  return new Promise((resolve) => {
    // No cluster: --file needs none.
    const env = { ...process.env, KUBECONFIG: join(tmpdir(), "no-kubeconfig") };
    execFile(file, [...prefix, ...args], { env }, (err, stdout, stderr) =>
      resolve({ stdout, stderr, code: err ? Number(err.code) : 0 }),
    );
  });
}

async function assertSame(args: string[]): Promise<Run> {
  const [istioctl, sluice] = [await run("istioctl", args), await run("sluice", args)];
  assert.deepEqual(sluice, istioctl, args.join(" "));
  return sluice;
}

const EVERY_OUTPUT = [
  ["workload"],
  ["workload", "-o", "yaml", "--address", "fd00::9"],
  ["workload", "--workload-namespace", "SHOP", "--workload-node", "NODE-A"],
  ["service"],
  ["services", "-o", "json"],
  ["svc", "-o", "yaml", "--service-namespace", "shop"],
  ["policy"],
  ["policies", "-o", "json"],
  ["pol", "-o", "yaml"],
  ["certificate"],
  ["certs", "-o", "json"],
  ["cert", "-o", "yaml"],
  ["connections"],
  ["connections", "-o", "json"],
  ["cons", "-o", "yaml", "--workload-namespace", "shop"],
  ["connections", "--raw", "--direction", "outbound"],
  ["all"],
  ["all", "--with-headers"],
  ["all", "-o", "json"],
  ["all", "-o", "yaml"],
];

/** Istio's writer test dump, from the module of the istioctl peer, when the module cache has it. */
function istioTestDump(): string | undefined {
  const istioctl = peerProgram("istioctl");
  const path = join(
    process.env.GOMODCACHE ?? join(homedir(), "go/pkg/mod"),
    `${istioctl.module}@${istioctl.version}`,
    "istioctl/pkg/writer/ztunnel/configdump/testdata/dump.json",
  );
  return existsSync(path) ? path : undefined;
}

describe("sluice ztunnel-config --file, as istioctl ztunnel-config", { skip }, () => {
  const scratch = mkdtempSync(join(tmpdir(), "ztunnel-config-"));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  test("a dump of lists: every part in every format", async () => {
    const file = join(FIXTURES, "lists.json");
    for (const args of EVERY_OUTPUT) await assertSame(["ztunnel-config", ...args, "--file", file]);
    // What both printed, so that the comparisons above compared something.
    const { stdout } = await run("sluice", ["zc", "workload", "-f", file]);
    assert.match(stdout, /^shop\s+cart-7d9f-abcde\s+10\.1\.0\.7\s+node-b\s+waypoint\s+HBONE$/m);
    assert.match(stdout, /^legacy\s+vm-1\s+vm-1\.example\.com\s+NA\s+TCP$/m);
    const certs = await run("sluice", ["zc", "certs", "-f", file]);
    assert.match(
      certs.stdout,
      /cart\s+Leaf\s+Available\s+true\s+e5dfb59150b2ba7f108d93dcec5aa613\s+2099-01-01T00:00:00Z/,
    );
  });

  test("a dump of maps (older ztunnels): the parts whose order istioctl fixes", async () => {
    const file = join(FIXTURES, "maps.json");
    // istioctl prints a map's workloads in Go's random map order with -o json; the rest is sorted.
    const sorted = EVERY_OUTPUT.filter(
      (args) => !(args[0] === "workload" && args.includes("-o")) || args.includes("--address"),
    );
    for (const args of sorted) await assertSame(["zc", ...args, "--file", file]);
    const { stdout } = await run("sluice", ["zc", "services", "-f", file]);
    assert.match(stdout, /^api\s+api\s+10\.96\.1\.1\s+None\s+2\/2$/m);
  });

  test("Istio's own writer test dump, when the Go module cache has it", { skip: !istioTestDump() }, async () => {
    const file = istioTestDump() ?? "";
    // Its parts in every format are printed by the fixtures' tests; here, the whole of it. Not
    // `all -o yaml`: go-yaml's key order does not order its workload state's UUID keys totally
    // (6a33… before 54ce…, 54ce… before 5f17…, 5f17… before 6a33…), so istioctl's order follows
    // Go's random map order there.
    const parts = [
      ["all"],
      ["all", "-o", "json"],
      ["svc", "-o", "json"],
      ["certs", "-o", "yaml"],
      ["cons", "-o", "json"],
    ];
    for (const args of parts) await assertSame(["zc", ...args, "--file", file]);
  });

  test("broken dumps and arguments: the same errors and exit status", async () => {
    const broken = {
      "type.json": '{"workloads":[{"name":5}]}',
      "nested.json": '{"workloads":[{"waypoint":{"destination":true}}]}',
      "list.json": '{"workloads":"x"}',
      "port.json": '{"services":[{"endpoints":{"a":{"port":{"70000":1}}}}]}',
      "state.json": '{"workloadState":{"a":{"info":{"name":[]}}}}',
      "truncated.json": '{"workloads":[',
    };
    for (const [name, text] of Object.entries(broken)) {
      writeFileSync(join(scratch, name), text);
      const r = await assertSame(["zc", "workload", "-f", join(scratch, name)]);
      assert.equal(r.code, 1);
    }
    const missing = await assertSame(["zc", "workload", "-f", join(scratch, "missing.json")]);
    assert.equal(missing.stderr, `Error: open ${join(scratch, "missing.json")}: no such file or directory\n`);
    const lists = join(FIXTURES, "lists.json");
    const format = await assertSame(["zc", "workload", "-f", lists, "-o", "table"]);
    assert.equal(format.stderr, 'Error: output format "table" not supported\n');
    await assertSame(["zc", "certs", "-f", lists, "--proxy-admin-port", "0"]);
    // istioctl prints its usage before this error; the error and the exit status are the same.
    const both = [
      await run("istioctl", ["zc", "workload", "-f", lists, "--node", "n1"]),
      await run("sluice", ["zc", "workload", "-f", lists, "--node", "n1"]),
    ];
    assert.deepEqual(
      both.map((r) => [r.code, r.stderr.trimEnd().split("\n").at(-1)]),
      Array(2).fill([1, "Error: at most one of --file, --node, or pod name must be passed"]),
    );
  });
});
