// Runs the real `sluice x envoyfilter diff` on temporary files: the unified diff of what a sidecar's
// EnvoyFilters change, JSON output with a refused patch reported, and an EnvoyFilter that validation
// refuses (unknown field, with its path). Plus the diff algorithm itself.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type ResourceChange, unifiedDiff } from "./envoyfilter-diff.ts";

const SLUICE_BIN = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "sluice-efdiff-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("SLUICE_")));

function sluice(args: string[]) {
  const result = spawnSync(process.execPath, [SLUICE_BIN, ...args], { encoding: "utf8", env: { ...env, HOME: dir } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const CONFIG = file(
  "service.yaml",
  `apiVersion: v1
kind: Service
metadata: {name: reviews, namespace: shop}
spec: {clusterIP: 10.96.0.40, ports: [{name: http, port: 9080}], selector: {app: reviews}}
`,
);

const filter = (patches: string) => `apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata: {name: tune, namespace: shop}
spec:
  workloadSelector: {labels: {app: reviews}}
  configPatches:
${patches}`;

const MERGE_CLUSTER = `  - applyTo: CLUSTER
    match: {context: SIDECAR_OUTBOUND, cluster: {service: reviews.shop.svc.cluster.local}}
    patch: {operation: MERGE, value: {perConnectionBufferLimitBytes: 32768}}
`;
const ROUTE_FIRST = `  - applyTo: HTTP_ROUTE
    match: {context: SIDECAR_OUTBOUND, routeConfiguration: {portNumber: 9080, vhost: {name: "reviews.shop.svc.cluster.local:9080"}}}
    patch: {operation: INSERT_FIRST, value: {name: health, match: {prefix: /healthz}, directResponse: {status: 200}}}
`;
const PROXY = ["--namespace", "shop", "--labels", "app=reviews", "--ip", "10.0.0.7"];

test("x envoyfilter diff: unified diffs of the changed cluster and route", () => {
  const filters = file("filters.yaml", filter(MERGE_CLUSTER + ROUTE_FIRST));
  const r = sluice(["x", "envoyfilter", "diff", "-f", filters, "-f", CONFIG, ...PROXY]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const cluster = "outbound|9080||reviews.shop.svc.cluster.local";
  assert.match(r.stdout, new RegExp(`^--- a/clusters/${cluster.replace(/\|/g, "\\|")}\n\\+\\+\\+ b/clusters/`, "m"));
  assert.match(r.stdout, /^\+perConnectionBufferLimitBytes: 32768$/m);
  assert.match(r.stdout, /^--- a\/routes\/9080$/m);
  assert.match(r.stdout, /^\+ {10}prefix: \/healthz$/m);
  // Only what the filters change: no listener differs.
  assert.doesNotMatch(r.stdout, /listeners\//);
});

test("x envoyfilter diff -o json: before/after pairs; a merge Envoy would reject is skipped with a warning", () => {
  // Valid alone, but the cluster it merges into has no transport socket: it would get one without a name.
  const broken = `  - applyTo: CLUSTER
    match: {context: SIDECAR_OUTBOUND, cluster: {name: PassthroughCluster}}
    patch:
      operation: MERGE
      value: {transportSocket: {typedConfig: {"@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext}}}
`;
  const filters = file("broken.yaml", filter(broken + MERGE_CLUSTER));
  const r = sluice(["x", "envoyfilter", "diff", "-f", filters, "-f", CONFIG, ...PROXY, "-o", "json"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stderr,
    /^Warning: EnvoyFilter shop\/tune configPatches\[0\] skipped at patch\.value: the patched envoy\.config\.cluster\.v3\.Cluster "PassthroughCluster" would be rejected by Envoy: transport_socket\.name: /m,
  );
  const changes = JSON.parse(r.stdout) as ResourceChange[];
  assert.deepEqual(
    changes.map((c) => `${c.section}/${c.name}`),
    ["clusters/outbound|9080||reviews.shop.svc.cluster.local"],
  );
  const patched = changes[0].after as Record<string, unknown>;
  assert.equal(patched.perConnectionBufferLimitBytes, 32768);
  assert.equal((changes[0].before as Record<string, unknown>).perConnectionBufferLimitBytes, undefined);
});

test("x envoyfilter diff: an EnvoyFilter validation refuses fails the command with the field path", () => {
  const typo = `  - applyTo: CLUSTER
    match: {cluster: {service: reviews.shop.svc.cluster.local}}
    patch: {operation: MERGE, value: {perConnectionBufferLimitByte: 1}}
`;
  const filters = file("typo.yaml", filter(typo));
  const r = sluice(["x", "envoyfilter", "diff", "-f", filters, "-f", CONFIG, ...PROXY]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /spec\.configPatches\[0\]\.patch\.value\.perConnectionBufferLimitByte/);
  assert.match(r.stderr, /unknown field "perConnectionBufferLimitByte" in envoy\.config\.cluster\.v3\.Cluster/);
  assert.equal(r.stdout, "");
});

test("unifiedDiff: hunks with context, added and removed texts", () => {
  const before = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
  const afterText = "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\n";
  assert.equal(
    unifiedDiff(before, afterText, ["a/x", "b/x"], 1),
    ["--- a/x", "+++ b/x", "@@ -3,3 +3,3 @@", " c", "-d", "+D", " e", "@@ -9,1 +9,2 @@", " i", "+j", ""].join("\n"),
  );
  assert.equal(unifiedDiff("", "x\n", ["/dev/null", "b/x"], 3), "--- /dev/null\n+++ b/x\n@@ -0,0 +1,1 @@\n+x\n");
  assert.equal(unifiedDiff("x\n", "x\n", ["a", "b"], 3), "");
});
