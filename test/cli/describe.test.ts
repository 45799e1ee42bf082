// `sluice x describe pod|service` run as a process over the bookinfo-like files in testdata/describe,
// and over the same objects in a real Kubernetes API server (test/cluster).
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { describeFromCluster, describeFromFiles } from "../../src/cli/describe-report.ts";
import { readConfigPaths } from "../../src/config/decode.ts";
import { type ConfigObject, loadMeshConfig } from "../../src/config/index.ts";
import { kindClient, type NamespacedClient } from "../../src/library/kube.ts";
import { KubeClient } from "../../src/sources/kube/client.ts";
import { clusterSkipReason, sharedCluster } from "../cluster/index.ts";

const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const FILES = fileURLToPath(new URL("./testdata/describe", import.meta.url));

const skip = clusterSkipReason();

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

/**
 * The describe files' objects in the test cluster, in namespaces of their own: the files rewritten
 * for them (`dir`) with a mesh config whose root namespace is the Istio namespace's stand-in
 * (`meshFile`, and ConfigMap istio there for the cluster side), so files and cluster describe the same.
 */
async function clusterOfFiles() {
  const cluster = await sharedCluster();
  const ns = await cluster.namespace("bookinfo");
  const istioNamespace = await cluster.namespace("istio-system");
  const dir = mkdtempSync(join(tmpdir(), "describe-"));
  for (const file of readdirSync(FILES)) {
    const text = readFileSync(join(FILES, file), "utf8")
      .replaceAll("namespace: bookinfo", `namespace: ${ns}`)
      .replaceAll('["bookinfo"]', `["${ns}"]`)
      .replaceAll("namespace: istio-system", `namespace: ${istioNamespace}`);
    writeFileSync(join(dir, file), text);
  }
  const meshYaml = `rootNamespace: ${istioNamespace}\n`;
  const meshFile = join(dir, "..", `${ns}-mesh.yaml`);
  writeFileSync(meshFile, meshYaml);
  const kubeConfig = cluster.kubeConfig();
  const objects: ConfigObject[] = [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "istio", namespace: istioNamespace },
      data: { mesh: meshYaml },
    },
  ];
  for (const doc of readConfigPaths([dir])) {
    if (!doc.object) throw new Error(`${doc.position.file}:${doc.position.line}: ${doc.error}`);
    objects.push(doc.object);
  }
  for (const obj of objects) {
    const client = kindClient(kubeConfig, obj.apiVersion, obj.kind) as NamespacedClient<ConfigObject>;
    const created = await client.create(obj);
    // Status is the status subresource's: pod IPs and the load balancer's address as a kubelet and a
    // cloud controller would write them.
    if (obj.status !== undefined) await client.updateStatus({ ...created, status: withPodIps(obj.status) });
  }
  return { kubeConfig, ns, istioNamespace, dir, meshFile, mesh: loadMeshConfig(meshYaml).mesh };
}

/** A pod status's podIP and hostIP with the lists the API server wants beside them. */
function withPodIps(status: unknown): unknown {
  const s = status as { podIP?: string; hostIP?: string };
  return {
    ...s,
    ...(s.podIP ? { podIPs: [{ ip: s.podIP }] } : {}),
    ...(s.hostIP ? { hostIPs: [{ ip: s.hostIP }] } : {}),
  };
}

test("describe from a cluster prints what describe from files prints for the same objects", { skip }, async () => {
  const { kubeConfig, ns, istioNamespace, dir, mesh } = await clusterOfFiles();
  const client = new KubeClient(kubeConfig);
  const options = { domainSuffix: "cluster.local", istioNamespace };
  for (const [target, name] of [
    ["pod", "reviews-v1-abc"],
    ["pod", "reviews-v3-def"],
    ["service", "reviews"],
  ] as const) {
    const fromFiles = describeFromFiles([dir], target, name, ns, { ...options, mesh });
    const fromCluster = await describeFromCluster(client, [], target, name, ns, options);
    assert.ok(fromFiles.text?.includes("Matching subsets"), fromFiles.problems?.join("\n"));
    assert.ok(fromFiles.text?.includes("Workload mTLS mode: STRICT"), fromFiles.text);
    assert.equal(fromCluster.text, fromFiles.text, `${target} ${name}`);
  }
  const missing = await describeFromCluster(client, [], "pod", "nope", ns, options);
  assert.deepEqual(missing.problems, [`pods "nope" not found in namespace ${ns}`]);
});

test("describe from a cluster: a file's object replaces the cluster's", { skip }, async () => {
  const { kubeConfig, ns, istioNamespace } = await clusterOfFiles();
  const client = new KubeClient(kubeConfig);
  const dir = mkdtempSync(join(tmpdir(), "describe-"));
  const file = join(dir, "dr.yaml");
  writeFileSync(
    file,
    `apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: reviews\n  namespace: ${ns}\nspec:\n  host: reviews\n  trafficPolicy:\n    tls:\n      mode: DISABLE\n`,
  );
  const options = { domainSuffix: "cluster.local", istioNamespace };
  const result = await describeFromCluster(client, [file], "pod", "reviews-v1-abc", ns, options);
  const lines = result.text?.split("\n") ?? [];
  assert.ok(lines.includes("   Traffic Policy TLS Mode: DISABLE"), result.text);
  assert.ok(!lines.includes("   Traffic Policy TLS Mode: ISTIO_MUTUAL"), result.text);
});

/** Runs sluice without blocking this process. */
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

test("sluice x describe without -f reads the --kubeconfig cluster in its context's namespace; kube debug lines", {
  skip,
}, async () => {
  const { kubeConfig: config, ns, istioNamespace, dir, meshFile } = await clusterOfFiles();
  // Without -n, the namespace is the kubeconfig context's.
  config.loadFromOptions({
    clusters: config.clusters,
    users: config.users,
    contexts: config.contexts.map((c) => ({ ...c, namespace: ns })),
    currentContext: config.currentContext,
  });
  const kubeconfig = join(mkdtempSync(join(tmpdir(), "describe-")), "kubeconfig");
  writeFileSync(kubeconfig, config.exportConfig(), { mode: 0o600 });
  const args = ["x", "describe", "pod", "reviews-v1-abc", "-i", istioNamespace];
  const live = await sluiceAsync([...args, "--kubeconfig", kubeconfig, "--log_output_level=kube:debug"]);
  assert.equal(live.status, 0, live.stderr);
  const fromFiles = await sluiceAsync([...args, "-n", ns, "-f", dir, "--meshConfig", meshFile]);
  assert.equal(fromFiles.status, 0, fromFiles.stderr);
  assert.ok(fromFiles.stdout.includes("Workload mTLS mode: STRICT"), fromFiles.stdout);
  assert.equal(live.stdout, fromFiles.stdout);
  // The debug lines are JSON; other lines are warnings about what the cluster holds, which other
  // tests share (their objects are warned about, not this test's).
  const lines = live.stderr.trim().split("\n");
  const logged = lines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line));
  const warnings = lines.filter((line) => !line.startsWith("{"));
  assert.deepEqual(
    warnings.filter((w) => w.includes(ns) || w.includes(istioNamespace)),
    [],
    live.stderr,
  );
  // Pods are listed across all namespaces, which other tests share: at least this test's three.
  assert.ok(
    logged.some((l) => l.level === "debug" && l.scope === "kube" && l.kind === "/Pod" && l.items >= 3),
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
