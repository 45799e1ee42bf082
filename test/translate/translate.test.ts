// `sluice x translate`: the real command on examples/mesh and on bad input, and Istio's sample inputs
// (../shared/conformance/istio/inputs) translated for a sidecar and a router in process, every
// generated resource checked against Envoy's constraints.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { admin, registry, unpackAny } from "../../src/api/index.ts";
import { type ProxySpec, translate } from "../../src/cli/translate-state.ts";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import { anyViolations } from "../support/pgv.ts";

const SLUICE_BIN = fileURLToPath(new URL("../../bin/sluice.js", import.meta.url));
const MESH_DIR = fileURLToPath(new URL("../../examples/mesh", import.meta.url));
const INPUTS = fileURLToPath(new URL("../../../shared/conformance/istio/inputs", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "sluice-translate-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("SLUICE_")));

function sluice(args: string[]) {
  const result = spawnSync(process.execPath, [SLUICE_BIN, ...args], { encoding: "utf8", env: { ...env, HOME: dir } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The resources inside a dump's sections (or the bare resources), as Anys. */
function resources(dump: admin.ConfigDump): Any[] {
  return dump.configs.flatMap((config): Any[] => {
    const section = unpackAny(config);
    if (!section) return [config];
    switch (section.$typeName) {
      case "envoy.admin.v3.ClustersConfigDump":
        return (section as admin.ClustersConfigDump).dynamicActiveClusters.flatMap((c) => c.cluster ?? []);
      case "envoy.admin.v3.ListenersConfigDump":
        return (section as admin.ListenersConfigDump).dynamicListeners.flatMap((l) => l.activeState?.listener ?? []);
      case "envoy.admin.v3.RoutesConfigDump":
        return (section as admin.RoutesConfigDump).dynamicRouteConfigs.flatMap((r) => r.routeConfig ?? []);
      case "envoy.admin.v3.SecretsConfigDump":
        return (section as admin.SecretsConfigDump).dynamicActiveSecrets.flatMap((s) => s.secret ?? []);
      case "envoy.admin.v3.EndpointsConfigDump":
        return (section as admin.EndpointsConfigDump).dynamicEndpointConfigs.flatMap((e) => e.endpointConfig ?? []);
      case "envoy.admin.v3.ScopedRoutesConfigDump":
        return [];
      default:
        return [config];
    }
  });
}

function names(anys: readonly Any[]): string[] {
  return anys.map((any) => {
    const m = unpackAny(any) as { name?: string; clusterName?: string } | undefined;
    return m?.name ?? m?.clusterName ?? "";
  });
}

test("translate prints a bookinfo sidecar's ConfigDump as proto3 JSON, every resource valid", () => {
  const run = sluice(["x", "translate", "-f", MESH_DIR, "--namespace", "bookinfo", "--labels", "app=productpage"]);
  assert.equal(run.code, 0, run.stderr);
  // Parsing back needs "@type" on every Any.
  const dump = fromJson(admin.ConfigDumpSchema, JSON.parse(run.stdout) as JsonValue, { registry });
  assert.deepEqual(
    dump.configs.map((c) => c.typeUrl.replace("type.googleapis.com/envoy.admin.v3.", "")),
    [
      "ClustersConfigDump",
      "ListenersConfigDump",
      "ScopedRoutesConfigDump",
      "RoutesConfigDump",
      "SecretsConfigDump",
      "EndpointsConfigDump",
    ],
  );
  const all = resources(dump);
  for (const any of all) assert.deepEqual(anyViolations(any), [], any.typeUrl);
  const listed = names(all);
  for (const name of ["outbound|9080|v2|reviews.bookinfo.svc.cluster.local", "virtualOutbound", "9080"]) {
    assert.ok(listed.includes(name), name);
  }
});

test("translate --types and -o yaml print only the asked types", () => {
  const run = sluice(["x", "translate", "-f", MESH_DIR, "--namespace", "bookinfo", "--types", "rds,nds", "-o", "yaml"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /"@type": type\.googleapis\.com\/envoy\.admin\.v3\.RoutesConfigDump/);
  assert.match(run.stdout, /"@type": type\.googleapis\.com\/istio\.networking\.nds\.v1\.NameTable/);
  assert.doesNotMatch(run.stdout, /ClustersConfigDump/);
});

test("translate exits 1 naming the invalid document, 2 on bad flags", () => {
  const bad = join(dir, "bad.yaml");
  writeFileSync(
    bad,
    "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: x}\nspec: {hosts: [a]}\n",
  );
  const invalid = sluice(["x", "translate", "-f", bad]);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /bad\.yaml:1: .*http, tcp or tls must be provided/);
  assert.equal(invalid.stdout, "");
  assert.equal(sluice(["x", "translate", "-f", MESH_DIR, "--labels", "novalue"]).code, 2);
  assert.equal(sluice(["x", "translate", "-f", MESH_DIR, "--types", "xds"]).code, 2);
});

const SIDECAR: ProxySpec = { type: "sidecar", ip: "10.0.0.1", namespace: "default", labels: {}, id: "app.default" };
const ROUTER: ProxySpec = {
  type: "router",
  ip: "10.0.0.2",
  namespace: "istio-system",
  labels: { istio: "ingressgateway" },
  id: "gw.istio-system",
};

test("every file of Istio's sample inputs, alone and all together, translates for a sidecar and a router within Envoy's constraints", (t) => {
  if (!existsSync(INPUTS)) {
    t.skip(`${INPUTS} is absent`);
    return;
  }
  const files = readdirSync(INPUTS).filter((f) => f.endsWith(".yaml"));
  assert.ok(files.length > 20, `only ${files.length} inputs`);
  let checked = 0;
  // Each file alone, then all of them together (their configs meet: shared hosts, Gateways, rules).
  for (const file of [...files.map((f) => join(INPUTS, f)), INPUTS]) {
    for (const proxy of [SIDECAR, ROUTER]) {
      const result = translate([file], proxy, {
        mesh: DEFAULT_MESH_CONFIG,
        domainSuffix: "cluster.local",
        types: ["CDS", "EDS", "LDS", "RDS", "SDS", "NDS"],
      });
      assert.ok(result.dump, `${file} (${proxy.type}): ${result.problems?.join("; ")}`);
      for (const any of resources(result.dump)) {
        assert.deepEqual(anyViolations(any), [], `${file} (${proxy.type}) ${any.typeUrl}`);
        checked++;
      }
    }
  }
  assert.ok(checked > 300, `only ${checked} resources`);
});
