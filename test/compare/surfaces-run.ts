// Compares the surfaces around xDS (test/compare/surfaces.ts) on their own, without the resource
// comparison of `npm run compare`: a test cluster, istiod and sluiced against it with Istio's default
// MeshConfig, the example mesh plus a Kubernetes Service (its EndpointSlice written from the sidecar's
// Pod), one sidecar collected from each and kept connected, then the comparison.
//   node --import tsx test/compare/surfaces-run.ts [--all] [--paths N] [--dump DIR]
//     --all       print identical comparisons too
//     --paths N   how many differing paths to print per comparison (default 3)
//     --dump DIR  also write what each served (/metrics, /version, /debug/*) under DIR/<istiod|sluice>/
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Cluster } from "../cluster/index.ts";
import { REPO_ROOT } from "../peers/paths.ts";
import { collect } from "./collect.ts";
import { type ControlPlane, startControlPlanes, waitForConfigs } from "./control-planes.ts";
import { loadScenario, unloadScenario } from "./load.ts";
import { proxyNode } from "./proxies.ts";
import { scenarioFrom } from "./scenario.ts";
import { compareSurfaces, holdProxy, surfaceReport } from "./surfaces.ts";

const { values } = parseArgs({
  options: {
    all: { type: "boolean", default: false },
    paths: { type: "string", default: "3" },
    dump: { type: "string" },
  },
});

const scenario = scenarioFrom(join(REPO_ROOT, "examples/mesh"), "examples/mesh");
const sidecar = scenario.proxies.find((p) => p.kind === "sidecar");
if (!sidecar) throw new Error("examples/mesh: no sidecar to connect");
// A Kubernetes Service selecting the sidecar's Pod: the loader writes its EndpointSlice.
scenario.objects.push({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: sidecar.labels.app ?? sidecar.name, namespace: sidecar.namespace },
  spec: {
    selector: { app: sidecar.labels.app ?? sidecar.name },
    ports: [{ name: "http", port: 80, targetPort: 8080 }],
  },
});

/** Writes what `plane` serves on each surface under `dir`, for reading by hand. */
async function dump(plane: ControlPlane, dir: string, proxyId: string): Promise<void> {
  const out = join(dir, plane.name);
  mkdirSync(join(out, "debug"), { recursive: true });
  const text = async (url: string) => (await fetch(url)).text();
  writeFileSync(join(out, "metrics.txt"), await text(`http://${plane.monitoring}/metrics`));
  writeFileSync(join(out, "version.txt"), await text(`http://${plane.monitoring}/version`));
  const list = JSON.parse(await text(`http://${plane.debug}/debug/list`)) as string[];
  for (const endpoint of list.filter((e) => !/[?&](push|clear)=true/.test(e))) {
    const url = `http://${plane.debug}/debug/${endpoint}${endpoint.includes("?") ? "&" : "?"}proxyID=${proxyId}`;
    writeFileSync(join(out, "debug", endpoint.replace(/[^A-Za-z0-9_=-]+/g, "_")), await text(url));
  }
}

const work = mkdtempSync(join(tmpdir(), "sluice-surfaces-"));
const cluster = await Cluster.start({ apiServerArgs: ["--service-cluster-ip-range=10.96.0.0/16"] });
let exitCode = 0;
try {
  const kubeconfig = join(work, "kubeconfig");
  cluster.writeKubeconfig(kubeconfig);
  await cluster.must("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "istio-system" },
  });
  const planes = await startControlPlanes(kubeconfig, "", work);
  const [istiod, sluice] = planes;
  try {
    const loaded = await loadScenario(cluster, scenario);
    for (const r of loaded.refused) console.log(`  note: not loaded: ${r}`);
    await Promise.all(planes.map((p) => waitForConfigs(p, loaded.configs, [])));
    await new Promise((r) => setTimeout(r, 1000));
    const node = proxyNode(sidecar);
    const options = { kind: sidecar.kind, node };
    const snapshots = await Promise.all(planes.map((p) => collect(p.xds, options)));
    console.log(
      `collected ${sidecar.namespace}/${sidecar.name}: ${snapshots.map((s, i) => `${planes[i]?.name} ${[...s.values()].reduce((n, m) => n + m.size, 0)}`).join(", ")} resources`,
    );
    const held = await Promise.all(planes.map((p) => holdProxy(p.xds, node)));
    try {
      const proxyId = `${sidecar.name}.${sidecar.namespace}`;
      const comparisons = await compareSurfaces(istiod, sluice, { proxy: sidecar, proxyId });
      for (const line of surfaceReport(comparisons, Number(values.paths))) console.log(line);
      if (values.all)
        for (const c of comparisons.filter((c) => c.outcome === "identical")) console.log(`  identical ${c.id}`);
      if (values.dump) for (const p of planes) await dump(p, values.dump, proxyId);
    } finally {
      for (const h of held) h.close();
      await unloadScenario(cluster, loaded);
    }
  } finally {
    await Promise.all(planes.map((p) => p.stop()));
  }
} catch (err) {
  console.error(err);
  exitCode = 1;
} finally {
  await cluster.stop();
  rmSync(work, { recursive: true, force: true });
}
process.exit(exitCode);
