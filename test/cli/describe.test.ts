// `sluice x describe pod|service` run as a process over the bookinfo-like files in testdata/describe,
// and over the same objects in an in-process Kubernetes API server.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { describeFromCluster, describeFromFiles } from "../../src/cli/describe-report.ts";
import { readConfigPaths } from "../../src/config/decode.ts";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { KubeClient } from "../../src/sources/kube/client.ts";
import { KubeTestServer } from "../kube-apiserver/index.ts";

const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const FILES = fileURLToPath(new URL("./testdata/describe", import.meta.url));

function sluice(...args: string[]) {
  return spawnSync(process.execPath, [SLUICE, ...args], { encoding: "utf8" });
}

test("describe pod: its service and port, DestinationRule subsets, VirtualService weights, mTLS and policies", () => {
  const r = sluice("x", "describe", "pod", "reviews-v1-abc", "-n", "bookinfo", "-f", FILES);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split("\n");
  for (const expected of [
    "Pod: reviews-v1-abc",
    "   Pod Ports: 9080 (reviews)",
    "Service: reviews",
    "   Port: http 9080/HTTP targets pod port 9080",
    'DestinationRule: reviews for "reviews.bookinfo.svc.cluster.local"',
    "   Matching subsets: v1",
    "      (Non-matching subsets v2)",
    "   Traffic Policy TLS Mode: ISTIO_MUTUAL",
    "   Policies: load balancer",
    "VirtualService: reviews",
    '   Route to host "reviews.bookinfo.svc.cluster.local" subset "v1" with weight 75%',
    "   1 additional destination(s) that will not reach this pod",
    "   Workload mTLS mode: STRICT",
    "   default.istio-system",
    "   reviews-viewer.bookinfo (ALLOW)",
  ]) {
    assert.ok(lines.includes(expected), `missing line ${JSON.stringify(expected)} in:\n${r.stdout}`);
  }
});

test("describe pod: a pod in no subset the routes name gets istioctl's warning and the mismatches", () => {
  const r = sluice("x", "describe", "pod", "reviews-v3-def", "-n", "bookinfo", "-f", FILES);
  assert.equal(r.status, 0, r.stderr);
  const vs = r.stdout.slice(
    r.stdout.indexOf("   Matching subsets"),
    r.stdout.indexOf("--------------------\nEffective"),
  );
  assert.equal(
    vs,
    [
      "   Matching subsets: ",
      "      (Non-matching subsets v1,v2)",
      "   Traffic Policy TLS Mode: ISTIO_MUTUAL",
      "   Policies: load balancer",
      "VirtualService: reviews",
      "   WARNING: No destinations match pod subsets (checked 2 HTTP routes)",
      "      Route to non-matching subset v2 for (Match:  when headers are end-user=jason)",
      "      Route to non-matching subset v1 for (everything)",
      "      Route to non-matching subset v2 for (everything)",
      "",
    ].join("\n"),
  );
});

test("describe pod: exposure through the ingress gateway, by the Gateway's VirtualService", () => {
  const r = sluice("x", "describe", "pod", "reviews-v1-abc", "-n", "bookinfo", "-f", FILES);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(
    r.stdout.endsWith(
      "\n\nExposed on Ingress Gateway http://203.0.113.7\nVirtualService: bookinfo\n   Match: /reviews*\n",
    ),
    r.stdout,
  );
});

test("describe service: described through the pod it selects", () => {
  const r = sluice("x", "describe", "service", "reviews", "-n", "bookinfo", "-f", FILES);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split("\n");
  assert.equal(lines[0], "Service: reviews");
  assert.ok(lines.includes("Pod: reviews-v1-abc"), r.stdout);
  assert.ok(lines.includes("   Matching subsets: v1"), r.stdout);
});

test("describe pod: an unknown pod is one error line and exit status 1", () => {
  const r = sluice("x", "describe", "pod", "nope", "-n", "bookinfo", "-f", FILES);
  assert.equal(r.status, 1);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, 'Error: pods "nope" not found in namespace bookinfo\n');
});

test("describe --help shows the subcommands", () => {
  const r = sluice("x", "describe", "--help");
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /describe pod <name>/);
  assert.match(r.stdout, /describe service <name>/);
});

/** An API server holding the objects of the describe files. */
async function clusterOfFiles(t: { after(fn: () => Promise<void>): void }): Promise<KubeTestServer> {
  const server = await KubeTestServer.start();
  t.after(() => server.close());
  for (const doc of readConfigPaths([FILES])) {
    if (!doc.object) throw new Error(`${doc.position.file}:${doc.position.line}: ${doc.error}`);
    server.create(doc.object);
  }
  return server;
}

const OPTIONS = { domainSuffix: "cluster.local", istioNamespace: "istio-system" };

test("describe from a cluster prints what describe from files prints for the same objects", async (t) => {
  const client = new KubeClient((await clusterOfFiles(t)).kubeConfig());
  for (const [target, name] of [
    ["pod", "reviews-v1-abc"],
    ["pod", "reviews-v3-def"],
    ["service", "reviews"],
  ] as const) {
    const fromFiles = describeFromFiles([FILES], target, name, "bookinfo", { ...OPTIONS, mesh: DEFAULT_MESH_CONFIG });
    const fromCluster = await describeFromCluster(client, [], target, name, "bookinfo", OPTIONS);
    assert.ok(fromFiles.text?.includes("Matching subsets"), fromFiles.problems?.join("\n"));
    assert.equal(fromCluster.text, fromFiles.text, `${target} ${name}`);
  }
  const missing = await describeFromCluster(client, [], "pod", "nope", "bookinfo", OPTIONS);
  assert.deepEqual(missing.problems, ['pods "nope" not found in namespace bookinfo']);
});

test("describe from a cluster: a file's object replaces the cluster's", async (t) => {
  const client = new KubeClient((await clusterOfFiles(t)).kubeConfig());
  const dir = mkdtempSync(join(tmpdir(), "describe-"));
  const file = join(dir, "dr.yaml");
  writeFileSync(
    file,
    "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: reviews\n  namespace: bookinfo\nspec:\n  host: reviews\n  trafficPolicy:\n    tls:\n      mode: DISABLE\n",
  );
  const result = await describeFromCluster(client, [file], "pod", "reviews-v1-abc", "bookinfo", OPTIONS);
  const lines = result.text?.split("\n") ?? [];
  assert.ok(lines.includes("   Traffic Policy TLS Mode: DISABLE"), result.text);
  assert.ok(!lines.includes("   Traffic Policy TLS Mode: ISTIO_MUTUAL"), result.text);
});

/** Runs sluice without blocking this process, which serves the API server the command reads. */
function sluiceAsync(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [SLUICE, ...args], { env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

test("sluice x describe without -f reads the --kubeconfig cluster in its context's namespace; kube debug lines", async (t) => {
  const server = await clusterOfFiles(t);
  // Without -n, the namespace is the kubeconfig context's.
  const config = server.kubeConfig();
  config.loadFromOptions({
    clusters: config.clusters,
    users: config.users,
    contexts: config.contexts.map((c) => ({ ...c, namespace: "bookinfo" })),
    currentContext: config.currentContext,
  });
  const kubeconfig = join(mkdtempSync(join(tmpdir(), "describe-")), "kubeconfig");
  writeFileSync(kubeconfig, config.exportConfig());
  const args = ["x", "describe", "pod", "reviews-v1-abc"];
  const live = await sluiceAsync([...args, "--kubeconfig", kubeconfig, "--log_output_level=kube:debug"]);
  assert.equal(live.status, 0, live.stderr);
  assert.equal(live.stdout, sluice(...args, "-n", "bookinfo", "-f", FILES).stdout);
  const logged = live.stderr
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  assert.ok(
    logged.some((l) => l.level === "debug" && l.scope === "kube" && l.kind === "/Pod" && l.items === 3),
    live.stderr,
  );
});

test("sluice x describe without -f and without a kubeconfig is a usage error", () => {
  const home = mkdtempSync(join(tmpdir(), "describe-home-"));
  const env = { PATH: process.env.PATH, HOME: home };
  const r = spawnSync(process.execPath, [SLUICE, "x", "describe", "pod", "a"], { encoding: "utf8", env });
  assert.equal(r.status, 2);
  assert.equal(r.stderr, "Error: no kubeconfig to reach a cluster: name one with --kubeconfig, or files with -f\n");
});

test("--log_output_level: debug lines of the file reads on stderr, output unchanged; a bad level exits 2", () => {
  const args = ["x", "describe", "pod", "reviews-v1-abc", "-n", "bookinfo", "-f", FILES];
  const quiet = sluice(...args);
  const debug = sluice(...args, "--log_output_level=debug");
  assert.equal(debug.status, 0, debug.stderr);
  assert.equal(debug.stdout, quiet.stdout);
  assert.equal(quiet.stderr, "");
  const line = JSON.parse(debug.stderr.trim().split("\n")[0]);
  assert.equal(line.level, "debug");
  assert.equal(line.scope, "default");
  assert.equal(line.msg, "read config files");
  assert.equal(line.documents, 11);

  const bad = sluice(...args, "--log_output_level=default:loud");
  assert.equal(bad.status, 2);
  assert.equal(bad.stdout, "");
  assert.equal(
    bad.stderr.split("\n")[0],
    'Error: --log_output_level: invalid level "loud" in "default:loud"; levels are none, fatal, error, warn, info, debug',
  );
});
