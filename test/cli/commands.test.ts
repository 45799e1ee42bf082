// The CLI commands that need no control plane, run as a program: precheck, dashboard, x config
// list (global flags from the config file and SLUICE_* environment), version --short, proxy-config
// from a file, and the one-line errors with their exit codes.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SLUICE = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const DUMP = fileURLToPath(
  new URL("../../../shared/conformance/istio/istioctl/proxyconfig/testdata/config_dump.json", import.meta.url),
);
const dir = mkdtempSync(join(tmpdir(), "sluice-commands-"));

function sluice(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [SLUICE, ...args], { encoding: "utf8", env: { ...process.env, ...env } });
  return { stdout: r.stdout, stderr: r.stderr, code: r.status };
}

test("x precheck passes valid config and fails invalid config with its error", () => {
  const good = join(dir, "good.yaml");
  writeFileSync(
    good,
    "apiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata:\n  name: g\nspec:\n  servers:\n  - port: {number: 80, name: http, protocol: HTTP}\n    hosts: ['*']\n",
  );
  const bad = join(dir, "bad.yaml");
  writeFileSync(
    bad,
    "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: a\nspec:\n  hosts: [x]\n",
  );
  const ok = sluice(["x", "precheck", "-f", good]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^✔ No issues found/);
  const failed = sluice(["x", "precheck", "-f", bad]);
  assert.equal(failed.code, 1);
  assert.match(failed.stdout, /^Error: VirtualService default\/a .*http, tcp or tls must be provided/m);
});

test("x config list shows where each global flag's value comes from", () => {
  const config = join(dir, "config.yaml");
  writeFileSync(config, "xds-address: cp.example:15012\n");
  const { stdout, code } = sluice(["x", "config", "list"], {
    SLUICECONFIG: config,
    SLUICE_ISTIO_NAMESPACE: "mesh-system",
  });
  assert.equal(code, 0);
  assert.match(stdout, /^FLAG\s+VALUE\s+FROM$/m);
  assert.match(stdout, new RegExp(`^xds-address\\s+cp\\.example:15012\\s+${config.replaceAll(".", "\\.")}$`, "m"));
  assert.match(stdout, /^istioNamespace\s+mesh-system\s+SLUICE_ISTIO_NAMESPACE$/m);
  assert.match(stdout, /^kubeconfig\s+default$/m);
});

test("dashboard prints the control plane's pages; version --short the client's", () => {
  const dash = sluice(["dashboard", "--monitoring-address", "10.1.2.3:15014"]);
  assert.equal(
    dash.stdout,
    "debug: http://10.1.2.3:15014/debug\nmetrics: http://10.1.2.3:15014/metrics\nversion: http://10.1.2.3:15014/version\n",
  );
  assert.match(sluice(["version", "--short"]).stdout, /^client version: \d+\.\d+\.\d+\S*\n$/);
  // The commit dist/ was built from (npm run build records it); "unknown" outside a git checkout.
  const { clientRevision } = JSON.parse(sluice(["version", "-o", "json"], { KUBECONFIG: "", HOME: dir }).stdout);
  assert.match(clientRevision, /^([0-9a-f]{40}|unknown)$/);
});

test("proxy-config reads an offline dump, and errors are one line with exit code 2", () => {
  const routes = sluice(["proxy-config", "route", "--file", DUMP, "--verbose=false"]);
  assert.equal(routes.code, 0, routes.stderr);
  const route = "inbound-vip|8000|http|httpbin.default.svc.cluster.local";
  assert.equal(routes.stdout, `${"NAME".padEnd(route.length + 5)}VIRTUAL HOSTS\n${route}     1\n`);
  // Without --xds-address and without any kubeconfig.
  const noAddress = sluice(["proxy-status"], { KUBECONFIG: "", HOME: dir });
  assert.equal(noAddress.code, 2);
  assert.equal(
    noAddress.stderr,
    "Error: no control plane address: pass --xds-address host:port (15010 with --plaintext, or 15012), or a kubeconfig (--kubeconfig, $KUBECONFIG or ~/.kube/config)\n",
  );
  const notJson = join(dir, "dump.json");
  writeFileSync(notJson, "not json");
  const bad = sluice(["pc", "cluster", "-f", notJson]);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr.split("\n").length, 2, bad.stderr);
  assert.match(bad.stderr, /^Error: error unmarshalling config dump response from Envoy/);
});

test("a parent command without a subcommand prints its help and succeeds, as istioctl's; an unknown one is a usage error", () => {
  for (const [args, usage] of [
    [[], /^sluice <command> \[options\]/],
    [["--kubeconfig", join(dir, "none")], /^sluice <command> \[options\]/],
    [["waypoint"], /^sluice waypoint\n/],
    [["proxy-config"], /^sluice proxy-config\n/],
    [["x"], /^sluice x\n/],
    [["x", "describe"], /^sluice x describe\n/],
    [["ztunnel-config"], /^sluice ztunnel-config\n/],
  ] as const) {
    const r = sluice([...args]);
    assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stdout, usage, args.join(" "));
    assert.match(r.stdout, /Commands:/, args.join(" "));
    assert.equal(r.stderr, "", args.join(" "));
  }
  const unknown = sluice(["waypoint", "frobnicate"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^Error: Unknown command: frobnicate/);
});
