// `sluice x describe pod|service` run as a process over the bookinfo-like files in testdata/describe.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

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
