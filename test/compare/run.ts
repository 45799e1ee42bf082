// `npm run compare`: differential conformance with istiod. For each scenario, loads it into a test
// cluster that istiod (the peer build) and sluiced both watch, connects every proxy of the scenario
// to each, and compares what they serve resource by resource. See docs/compare.md.
//   --scenarios DIR    run the scenarios in DIR instead of the standard set
//   --scenario NAME    run only scenarios whose name is NAME or starts with NAME/
//   --ratchet          exit 1 if a resource recorded as identical in the baseline is not (npm test)
//   --update-baseline  add the resources identical now to the baseline, then as --ratchet
//   --results DIR      where the per-resource diffs go (default build/compare)
//   --cli              compare the CLI instead: istioctl analyze/validate against sluice's, per scenario
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Cluster } from "../cluster/index.ts";
import { conformanceRoot } from "../conformance/corpus.ts";
import { peersSkipReason, REPO_ROOT } from "../peers/paths.ts";
import { compareBaseline, readCompareBaseline, readUnstable, SURFACES, writeCompareBaseline } from "./baseline.ts";
import { type CliComparison, cliReport, compareCli } from "./cli.ts";
import { collect, type Snapshot } from "./collect.ts";
import { type ControlPlane, startControlPlanes, waitForConfigs } from "./control-planes.ts";
import { compareSnapshots, type ResourceComparison } from "./diff.ts";
import { loadScenario, unloadScenario } from "./load.ts";
import { nodeId, proxyNode } from "./proxies.ts";
import { writeResults } from "./report.ts";
import { loadScenarios, type Scenario } from "./scenario.ts";
import { compareSurfaces, holdProxy, type SurfaceComparison, surfaceReport } from "./surfaces.ts";

const { values } = parseArgs({
  options: {
    scenarios: { type: "string" },
    scenario: { type: "string" },
    ratchet: { type: "boolean", default: false },
    "update-baseline": { type: "boolean", default: false },
    results: { type: "string", default: join(REPO_ROOT, "build/compare") },
    cli: { type: "boolean", default: false },
  },
});
const ratchet = values.ratchet || values["update-baseline"];

// Without the reference programs the comparison cannot run: skipped (on CI, peersSkipReason throws).
const missing = values.cli ? peersSkipReason("istioctl") : peersSkipReason("etcd", "kube-apiserver", "istiod");
if (missing) {
  console.log(`compare: skipped (${missing})`);
  process.exit(0);
}

const selected = loadScenarios(conformanceRoot(), values.scenarios).filter(
  (s) => !values.scenario || s.name === values.scenario || s.name.startsWith(`${values.scenario}/`),
);
if (selected.length === 0) {
  console.error(`compare: no scenario matches ${values.scenario ?? values.scenarios}`);
  process.exit(2);
}
const baseline = readCompareBaseline();
const unstable = readUnstable();

/** A CLI message comparison in the shape the ratchet takes: `analyze …` is type analyze. */
function cliAsResource(c: CliComparison): ResourceComparison {
  const [type = c.id, ...name] = c.id.split(" ");
  return { id: c.id, proxy: "", type, name: name.join(" "), outcome: c.outcome, paths: c.detail ? [c.detail] : [] };
}

/** `--cli`: both CLIs over every scenario's files (no cluster), ratcheted under `cli/<scenario>`. */
async function compareTheClis(scenarios: Scenario[]): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), "sluice-compare-cli-"));
  let results: Map<string, CliComparison[]>;
  try {
    results = await compareCli(scenarios, work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  for (const line of cliReport(results, !ratchet)) console.log(line);
  const asResources = new Map([...results].map(([name, cs]) => [`cli/${name}`, cs.map(cliAsResource)]));
  const verdict = compareBaseline(asResources, baseline, ratchet, undefined, unstable);
  for (const line of verdict.lines.filter((l) => l.startsWith("  REGRESSED"))) console.log(line);
  if (values["update-baseline"])
    console.log(`baseline: ${writeCompareBaseline(baseline, asResources, unstable)} messages added`);
  return verdict.failed > 0 ? 1 : 0;
}
if (values.cli) process.exit(await compareTheClis(selected));

/** The Gateway API CRDs of ../shared are a development bundle, which istiod reads as v0.0.0 and ignores. */
async function stampGatewayApiBundle(cluster: Cluster): Promise<void> {
  const path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  const crds = (await cluster.must("GET", path)).body.items as { metadata: { name: string } }[];
  for (const crd of crds.filter((c) => c.metadata.name.endsWith(".gateway.networking.k8s.io"))) {
    await cluster.must(
      "PATCH",
      `${path}/${crd.metadata.name}`,
      { metadata: { annotations: { "gateway.networking.k8s.io/bundle-version": "v1.6.0" } } },
      { "content-type": "application/merge-patch+json" },
    );
  }
}

const work = mkdtempSync(join(tmpdir(), "sluice-compare-"));
const cluster = await Cluster.start({ apiServerArgs: ["--service-cluster-ip-range=10.96.0.0/16"] });
const kubeconfig = join(work, "kubeconfig");
cluster.writeKubeconfig(kubeconfig);
await cluster.must("POST", "/api/v1/namespaces", {
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: "istio-system" },
});
await stampGatewayApiBundle(cluster);
// istiod elects its ServiceEntry address allocator with a ConfigMap lock, Sluice with a Lease of the same
// name, so side by side both would lead and allocate; istiod's allocator panics on the other's writes
// (ipallocate resolveConflict). The Lease is given to istiod here (held a day), so only istiod allocates
// and both read the same addresses.
// A Lease's times are MicroTime: six fractional digits.
const microNow = new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
await cluster.must("POST", "/apis/coordination.k8s.io/v1/namespaces/istio-system/leases", {
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name: "istio-ip-autoallocate" },
  spec: {
    holderIdentity: "istiod",
    leaseDurationSeconds: 86_400,
    acquireTime: microNow,
    renewTime: microNow,
  },
});

rmSync(values.results, { recursive: true, force: true });
mkdirSync(values.results, { recursive: true });

const results = new Map<string, ResourceComparison[]>();
/** The scenario during which the surfaces around xDS are compared: a sidecar of it stays connected. */
const SURFACES_SCENARIO = "examples/mesh";
let surfaces: SurfaceComparison[] = [];
const problems: string[] = [];
/** Resources sluiced served differently with its XDS cache off (`paths` read cache on | cache off). */
const cacheDifferences: string[] = [];
let cacheResources = 0;
// Scenarios that share a MeshConfig and an environment share a pair of control planes (another
// MeshConfig or environment restarts both).
const byPlanes = new Map<string, Scenario[]>();
const planesKey = (s: Scenario) => JSON.stringify([s.meshConfig ?? "", s.env ?? {}]);
for (const s of selected) byPlanes.set(planesKey(s), [...(byPlanes.get(planesKey(s)) ?? []), s]);
/** Loads one scenario, collects every proxy from both control planes, compares, and unloads it. */
async function compareScenario(planes: [ControlPlane, ControlPlane, ControlPlane], scenario: Scenario): Promise<void> {
  const loaded = await loadScenario(cluster, scenario);
  try {
    for (const r of loaded.refused) problems.push(`${scenario.name}: not loaded: ${r}`);
    await Promise.all(planes.map((p) => waitForConfigs(p, loaded.configs, [])));
    // Services, Pods and slices have no configz: give both a moment past their debounce.
    await new Promise((r) => setTimeout(r, 1000));
    const comparisons: ResourceComparison[] = [];
    const recorded = baseline[scenario.name] ?? [];
    for (const proxy of scenario.proxies) {
      const options = { kind: proxy.kind, node: proxyNode(proxy), targets: proxy.targets };
      const label = `${proxy.namespace}/${proxy.name}`;
      let istiod: Snapshot;
      let sluice: Snapshot;
      let uncached: Snapshot;
      let compared: ResourceComparison[];
      for (let attempt = 1; ; attempt++) {
        [istiod, sluice, uncached] = (await Promise.all(planes.map((p) => collect(p.xds, options)))) as [
          Snapshot,
          Snapshot,
          Snapshot,
        ];
        compared = compareSnapshots(label, istiod, sluice);
        const served = new Set(compared.map((c) => c.id));
        // Served by neither, though the baseline has it: on a loaded machine the scenario's last Pods
        // may not have reached both yet (they have no configz to wait on). Ask again, twice at most.
        const unseen = recorded.filter((id) => id.startsWith(`${label} `) && !served.has(id));
        if (unseen.length === 0 || attempt === 3) break;
        await new Promise((r) => setTimeout(r, 2000));
      }
      if (istiod.size === 0) problems.push(`${scenario.name}: istiod served ${nodeId(proxy)} nothing`);
      comparisons.push(...compared);
      // The XDS cache must change nothing: with it off, sluiced serves the same resources.
      const cacheCompared = compareSnapshots(label, sluice, uncached);
      cacheResources += cacheCompared.length;
      for (const c of cacheCompared.filter((c) => c.outcome !== "identical")) {
        const paths = c.paths.slice(0, 3).map((p) => p.replace(": istiod ", ": on ").replace(" | sluice ", " | off "));
        cacheDifferences.push(`${scenario.name} ${c.id}: ${c.outcome === "differs" ? paths.join("; ") : c.outcome}`);
      }
      writeResults(values.results, scenario.name, label, istiod, sluice);
    }
    results.set(scenario.name, comparisons);
    if (scenario.name === SURFACES_SCENARIO) {
      const sidecar = scenario.proxies.find((p) => p.kind === "sidecar");
      if (!sidecar) throw new Error(`${scenario.name} has no sidecar to compare the surfaces with`);
      const held = await Promise.all(planes.slice(0, 2).map((p) => holdProxy(p.xds, proxyNode(sidecar))));
      try {
        const proxyId = `${sidecar.name}.${sidecar.namespace}`;
        surfaces = await compareSurfaces(planes[0], planes[1], { proxy: sidecar, proxyId });
      } finally {
        for (const h of held) h.close();
      }
      results.set(SURFACES, surfaces.map(surfaceAsResource));
    }
  } finally {
    await unloadScenario(cluster, loaded);
    await Promise.all(planes.map((p) => waitForConfigs(p, [], loaded.configs)));
  }
}

try {
  for (const scenarios of byPlanes.values()) {
    const first = scenarios[0] as Scenario;
    const planes = await startControlPlanes(kubeconfig, first.meshConfig ?? "", work, first.env);
    try {
      for (const scenario of scenarios) {
        // A failed attempt is reported, and the scenario loaded again once: only on a busy machine has
        // a control plane been seen not to catch up in time. A second failure leaves no results (its
        // baseline resources then regress).
        for (let attempt = 1; attempt <= 2; attempt++) {
          try {
            await compareScenario(planes, scenario);
            break;
          } catch (err) {
            problems.push(`${scenario.name}: attempt ${attempt} failed: ${(err as Error).message}`);
            results.set(scenario.name, []);
          }
        }
      }
    } finally {
      await Promise.all(planes.map((p) => p.stop()));
    }
  }
} finally {
  await cluster.stop();
  // The control planes' logs stay for a run that had problems.
  if (problems.length === 0) rmSync(work, { recursive: true, force: true });
  else problems.push(`logs of istiod and sluiced: ${work}`);
}

/** A surface comparison in the shape the report and the ratchet take: `metrics <name>` is type metrics. */
function surfaceAsResource(c: SurfaceComparison): ResourceComparison {
  const [type = c.id, ...name] = c.id.split(" ");
  return { id: c.id, proxy: "", type, name: name.join(" "), outcome: c.outcome, paths: c.paths };
}

const verdict = compareBaseline(results, baseline, ratchet, values.results, unstable);
for (const line of verdict.lines) console.log(line);
if (surfaces.length > 0) for (const line of surfaceReport(surfaces).slice(1)) console.log(line);
console.log(`cache off: ${cacheResources - cacheDifferences.length}/${cacheResources} resources identical to cache on`);
for (const d of cacheDifferences) console.log(`  CACHE ${d}`);
for (const p of problems) console.log(`  note: ${p}`);
if (values["update-baseline"]) {
  const added = writeCompareBaseline(baseline, results, unstable);
  console.log(`baseline: ${added} resources added`);
}
process.exit(verdict.failed > 0 || cacheDifferences.length > 0 ? 1 : 0);
