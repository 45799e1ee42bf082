// The load test side by side with istiod (issue 28): the generated mesh (mesh.ts) is loaded into a
// test cluster (a real kube-apiserver and etcd), and for each mesh, protocol and proxy count istiod
// (the peer build) and then sluiced run against it, one after the other, each with the machine to
// itself and its default settings. The same load process syncs the same sidecars from each, then one
// endpoint change and one VirtualService change are written to the API server and timed to every
// proxy that sees them. Each figure is reported as sluiced / istiod.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConfigObject } from "../../src/config/index.ts";
import { Cluster } from "../../test/cluster/index.ts";
import {
  type PlaneInputs,
  type StartingPlane,
  startIstiod,
  startSluiced,
  waitForConfigs,
} from "../../test/compare/control-planes.ts";
import { collectionPath } from "../../test/compare/load.ts";
import {
  type ChangeReport,
  cpuSeconds,
  describeChange,
  formatBytes,
  formatMs,
  peakRssMiB,
  pooledChanges,
  rssMiB,
  type SluicedMemory,
  sleep,
  sluicedMemory,
  sum,
  timeChange,
  Worker,
} from "./measure-plane.ts";
import {
  addedEndpointIp,
  changedRoutePrefix,
  INITIAL_ROUTE_PREFIX,
  type MeshKind,
  type MeshShape,
  NAMESPACES,
  node,
  proxyIdentity,
  serviceObjects,
  sidecar,
  virtualService,
} from "./mesh.ts";
import type { Protocol } from "./messages.ts";
import type { LoadOptions } from "./run-load.ts";

type PlaneName = "istiod" | "sluiced";

/** What one control plane did in one run. */
export interface PlaneRun {
  sync: { ms: number; failed: number; retries: number; bytes: number; cpuSeconds: number };
  /** Before any proxy connected: the mesh alone. */
  rssReadyMiB: number;
  rssAtRestMiB: number;
  /** sluiced's memory at rest, by where it is (istiod: none). */
  sluicedAtRest?: SluicedMemory;
  rssPeakMiB: number;
  endpointChange: ChangeReport;
  virtualServiceChange: ChangeReport;
}

export interface SideBySideRun {
  mesh: MeshKind;
  protocol: Protocol;
  proxies: number;
  istiod: PlaneRun;
  sluiced: PlaneRun;
}

/** One figure of one run, as `--json` writes it; lower is better for every figure. */
export interface FigureRecord {
  /** The mesh (scoped, unscoped), or for a micro benchmark Istio's name of the case. */
  mesh: string;
  /** The protocol (sotw, delta), or "micro". */
  mode: string;
  /** The proxy count, or for a growth figure the range it spans ("500-5000"); 1 for a micro benchmark. */
  sidecars: number | string;
  figure: string;
  sluiced: number;
  istiod: number;
  ratio: number;
}

/** After the sync, before the at-rest sample: both collect what the sync left (Go's GC, sluiced's idle GC). */
const SETTLE_MS = 20_000;
/** Between a new endpoint's Pod and its EndpointSlice entry, as a kubelet and the endpoint controller would. */
const POD_BEFORE_SLICE_MS = 3000;
/**
 * Endpoint changes timed in each run unless `--endpoint-changes` says otherwise, their latencies
 * pooled: one change's p99 moved by tens of ms between runs of the same code (a slow push, the load
 * process busy), more than sluiced's changes did; the pooled p99 lies inside the slowest of them.
 */
export const DEFAULT_ENDPOINT_CHANGES = 5;
/** Objects written to the API server at once while loading the mesh. */
const LOAD_CONCURRENCY = 16;

/** Runs `work` over `items`, `concurrency` at a time. */
async function inParallel<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const lanes = Array.from({ length: concurrency }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(lanes);
}

/** Creates an object (a Pod with the status a kubelet would set). */
async function create(cluster: Cluster, o: ConfigObject): Promise<void> {
  const path = collectionPath(o as Parameters<typeof collectionPath>[0]);
  if (!path) throw new Error(`${o.kind}: not a kind of the cluster`);
  const { status, ...body } = o as ConfigObject & { status?: object };
  await cluster.must("POST", path, body);
  if (o.kind === "Pod") {
    const patch = { status };
    await cluster.must("PATCH", `${path}/${o.metadata.name}/status`, patch, MERGE_PATCH);
  }
}

const MERGE_PATCH = { "content-type": "application/merge-patch+json" };
const objectPath = (o: ConfigObject) =>
  `${collectionPath(o as Parameters<typeof collectionPath>[0])}/${o.metadata.name}`;

/** The mesh both read: namespaces, the node, every Service with its slice and Pods, the VirtualService. */
async function loadMesh(cluster: Cluster, shape: Omit<MeshShape, "kind">): Promise<void> {
  const namespaces = ["istio-system", ...Array.from({ length: NAMESPACES }, (_, n) => `ns-${n}`)];
  for (const name of namespaces) {
    await cluster.must("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  }
  await create(cluster, node);
  const objects = Array.from({ length: shape.services }, (_, s) => serviceObjects({ ...shape, kind: "scoped" }, s));
  await inParallel(objects, LOAD_CONCURRENCY, async (service) => {
    for (const o of service) await create(cluster, o);
  });
  await create(cluster, virtualService(INITIAL_ROUTE_PREFIX));
}

/** Makes the cluster's Sidecars those of `kind`: one per namespace when scoped, none when not. */
async function setSidecars(cluster: Cluster, kind: MeshKind): Promise<void> {
  for (let n = 0; n < NAMESPACES; n++) {
    const o = sidecar(`ns-${n}`);
    const held = (await cluster.request("GET", objectPath(o))).status === 200;
    if (kind === "scoped" && !held) await create(cluster, o);
    if (kind === "unscoped" && held) await cluster.must("DELETE", objectPath(o));
  }
}

/** svc-0's EndpointSlice with `extraIps`, and the Pods of those. */
function svc0With(shape: MeshShape, extraIps: string[]) {
  const objects = serviceObjects(shape, 0, extraIps);
  const slice = objects.find((o) => o.kind === "EndpointSlice");
  if (!slice) throw new Error("svc-0 has no EndpointSlice");
  return { slice, addedPods: objects.filter((o) => o.kind === "Pod").slice(shape.endpoints) };
}

/** The addresses the `count` endpoint changes of the run numbered `change` add to svc-0, one a change. */
function addedIps(change: number, count: number): string[] {
  return Array.from({ length: count }, (_, k) => addedEndpointIp(change * count + k));
}

/** The configs a control plane must hold before the proxies connect. */
function configsOf(kind: MeshKind) {
  const vs = { kind: "VirtualService", namespace: "ns-0", name: "svc-0" };
  const sidecars = Array.from({ length: NAMESPACES }, (_, n) => ({
    kind: "Sidecar",
    namespace: `ns-${n}`,
    name: "default",
  }));
  return kind === "scoped" ? { present: [vs, ...sidecars], absent: [] } : { present: [vs], absent: sidecars };
}

function startPlane(name: PlaneName, inputs: PlaneInputs, profileDir?: string): Promise<StartingPlane> {
  if (name === "istiod") return startIstiod(inputs);
  const nodeArgs = profileDir ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [];
  return startSluiced(inputs, { nodeArgs });
}

/** `change` numbers each change, so that its marker is new to every proxy. */
async function runPlane(
  name: PlaneName,
  cluster: Cluster,
  inputs: PlaneInputs,
  shape: MeshShape,
  protocol: Protocol,
  n: number,
  change: number,
  { endpointChanges, profileDir }: { endpointChanges: number; profileDir?: string },
): Promise<PlaneRun> {
  const started = await startPlane(name, inputs, profileDir);
  const { plane, pid } = started;
  let worker: Worker | undefined;
  try {
    await started.ready();
    const { present, absent } = configsOf(shape.kind);
    await waitForConfigs(plane, present, absent);
    // Services, slices and Pods have no configz: give the plane a moment past its debounce.
    await sleep(3000);
    worker = new Worker();
    const proxies = Array.from({ length: n }, (_, i) => proxyIdentity(shape, i));
    const rssReadyMiB = rssMiB(pid);
    const cpuBefore = cpuSeconds(pid);
    const synced = await worker.ask({ type: "connect", address: plane.xds, protocol, proxies }, "synced");
    const syncCpu = cpuSeconds(pid) - cpuBefore;
    await sleep(SETTLE_MS);
    const rssAtRestMiB = rssMiB(pid);
    const sluicedAtRest = name === "sluiced" ? await sluicedMemory(plane.monitoring) : undefined;
    const fullBytes = sum(synced.bytes);

    // Each change adds one more address (its Pod made first) and is timed by it.
    const ips = addedIps(change, endpointChanges);
    const changeReports: ChangeReport[] = [];
    for (let k = 0; k < ips.length; k++) {
      const { slice, addedPods } = svc0With(shape, ips.slice(0, k + 1));
      await create(cluster, addedPods[k]);
      await sleep(POD_BEFORE_SLICE_MS);
      const write = () => cluster.must("PATCH", objectPath(slice), { endpoints: slice.endpoints }, MERGE_PATCH);
      changeReports.push(await timeChange(worker, pid, ips[k], write, fullBytes));
    }
    const endpointChange = pooledChanges(changeReports);
    const vs = virtualService(changedRoutePrefix(change));
    const virtualServiceChange = await timeChange(
      worker,
      pid,
      changedRoutePrefix(change),
      () => cluster.must("PATCH", objectPath(vs), { spec: vs.spec }, MERGE_PATCH),
      fullBytes,
    );
    const rssPeakMiB = peakRssMiB(pid);
    return {
      sync: { ms: synced.ms, failed: synced.failed, retries: synced.retries, bytes: fullBytes, cpuSeconds: syncCpu },
      rssReadyMiB,
      rssAtRestMiB,
      sluicedAtRest,
      rssPeakMiB,
      endpointChange,
      virtualServiceChange,
    };
  } finally {
    await worker?.close();
    await plane.stop();
    await restoreSvc0(cluster, shape, addedIps(change, endpointChanges));
  }
}

/** Undoes the changes of a run: svc-0's slice and VirtualService as loaded, the Pods of `added` gone. */
async function restoreSvc0(cluster: Cluster, shape: MeshShape, added: string[]): Promise<void> {
  const { slice, addedPods } = svc0With(shape, added);
  const original = svc0With(shape, []).slice;
  await cluster.must("PATCH", objectPath(slice), { endpoints: original.endpoints }, MERGE_PATCH);
  for (const pod of addedPods) await cluster.request("DELETE", `${objectPath(pod)}?gracePeriodSeconds=0`);
  const vs = virtualService(INITIAL_ROUTE_PREFIX);
  await cluster.must("PATCH", objectPath(vs), { spec: vs.spec }, MERGE_PATCH);
}

/** Every side-by-side run, each reported as soon as it is done. */
export async function* runAgainstIstiod(options: LoadOptions): AsyncGenerator<SideBySideRun> {
  const work = mkdtempSync(join(tmpdir(), "sluice-against-"));
  const cluster = await Cluster.start({ apiServerArgs: ["--service-cluster-ip-range=172.16.0.0/16"] });
  try {
    const kubeconfig = join(work, "kubeconfig");
    cluster.writeKubeconfig(kubeconfig);
    const meshFile = join(work, "mesh.yaml");
    writeFileSync(meshFile, "");
    const inputs = { kubeconfig, meshFile, workDir: work };
    const loadStart = performance.now();
    await loadMesh(cluster, { services: options.services, endpoints: options.endpoints });
    console.log(`against istiod: mesh loaded in ${((performance.now() - loadStart) / 1000).toFixed(0)} s`);
    const endpointChanges = options.endpointChanges ?? DEFAULT_ENDPOINT_CHANGES;
    let change = 0;
    for (const kind of options.meshes) {
      await setSidecars(cluster, kind);
      for (const protocol of options.protocols) {
        for (const n of options.proxies) {
          const shape = { kind, services: options.services, endpoints: options.endpoints };
          const istiod = await runPlane("istiod", cluster, inputs, shape, protocol, n, ++change, { endpointChanges });
          const sluiced = await runPlane("sluiced", cluster, inputs, shape, protocol, n, ++change, {
            endpointChanges,
            profileDir: options.sluicedProfileDir,
          });
          yield { mesh: kind, protocol, proxies: n, istiod, sluiced };
        }
      }
    }
    rmSync(work, { recursive: true, force: true });
  } finally {
    await cluster.stop();
  }
}

/** The figures of one run; `value` reads one from a plane's run. */
const FIGURES: { figure: string; value: (r: PlaneRun) => number }[] = [
  { figure: "cold sync (s)", value: (r) => r.sync.ms / 1000 },
  { figure: "CPU-seconds to sync", value: (r) => r.sync.cpuSeconds },
  { figure: "RSS at rest (MiB)", value: (r) => r.rssAtRestMiB },
  { figure: "RSS peak (MiB)", value: (r) => r.rssPeakMiB },
  { figure: "endpoint change p50 (ms)", value: (r) => r.endpointChange.p50Ms },
  { figure: "endpoint change p99 (ms)", value: (r) => r.endpointChange.p99Ms },
  { figure: "endpoint change bytes", value: (r) => r.endpointChange.bytes },
  { figure: "VirtualService change p50 (ms)", value: (r) => r.virtualServiceChange.p50Ms },
  { figure: "VirtualService change p99 (ms)", value: (r) => r.virtualServiceChange.p99Ms },
  { figure: "VirtualService change bytes", value: (r) => r.virtualServiceChange.bytes },
];

/** How a figure grows per added sidecar, from the smallest to the largest run of a mesh and mode. */
const GROWTH: { figure: string; value: (r: PlaneRun) => number }[] = [
  { figure: "CPU-seconds to sync per added sidecar", value: (r) => r.sync.cpuSeconds },
  { figure: "RSS at rest (MiB) per added sidecar", value: (r) => r.rssAtRestMiB },
];

const record = (r: SideBySideRun, figure: string, sluiced: number, istiod: number, sidecars: number | string) => ({
  mesh: r.mesh,
  mode: r.protocol,
  sidecars,
  figure,
  sluiced,
  istiod,
  ratio: sluiced / istiod,
});

/** Every figure of every run as records, and the growth of each mesh and mode run at several sizes. */
export function figureRecords(runs: readonly SideBySideRun[]): FigureRecord[] {
  const records: FigureRecord[] = runs.flatMap((r) =>
    FIGURES.map((f) => record(r, f.figure, f.value(r.sluiced), f.value(r.istiod), r.proxies)),
  );
  const series = new Map<string, SideBySideRun[]>();
  for (const r of runs) series.set(`${r.mesh} ${r.protocol}`, [...(series.get(`${r.mesh} ${r.protocol}`) ?? []), r]);
  for (const sized of series.values()) {
    if (sized.length < 2) continue;
    const sorted = [...sized].sort((a, b) => a.proxies - b.proxies);
    const [small, large] = [sorted[0], sorted[sorted.length - 1]];
    const added = large.proxies - small.proxies;
    for (const g of GROWTH) {
      const slope = (plane: PlaneName) => (g.value(large[plane]) - g.value(small[plane])) / added;
      records.push(record(large, g.figure, slope("sluiced"), slope("istiod"), `${small.proxies}-${large.proxies}`));
    }
  }
  return records;
}

/** A record is at or ahead when sluiced's figure is no larger than istiod's. */
export const atOrAhead = (r: FigureRecord) => r.sluiced <= r.istiod;

export function printSideBySide(r: SideBySideRun): void {
  console.log(`against istiod: ${r.mesh}, ${r.protocol}, ${r.proxies} sidecars`);
  for (const name of ["istiod", "sluiced"] as const) {
    const run = r[name];
    const failed = run.sync.failed > 0 ? ` (${run.sync.failed} FAILED)` : "";
    const retries = run.sync.retries > 0 ? `, ${run.sync.retries} streams opened again` : "";
    const m = run.sluicedAtRest;
    const where = m
      ? ` (V8 heap used ${m.heapUsedMiB.toFixed(0)} MiB, external ${m.externalMiB.toFixed(0)} MiB, of which ArrayBuffers alive ${m.arrayBuffersMiB.toFixed(0)} MiB)`
      : "";
    console.log(
      `  ${name}: cold sync ${formatMs(run.sync.ms)}${failed}${retries}; ${formatBytes(run.sync.bytes)} sent; CPU ${run.sync.cpuSeconds.toFixed(2)} s; RSS before the proxies ${run.rssReadyMiB.toFixed(0)} MiB, at rest ${run.rssAtRestMiB.toFixed(0)} MiB${where}, peak ${run.rssPeakMiB.toFixed(0)} MiB`,
    );
    console.log(`    endpoint change: ${describeChange(run.endpointChange, name)}`);
    console.log(`    VirtualService change: ${describeChange(run.virtualServiceChange, name)}`);
  }
}

const figureValue = (figure: string, v: number) =>
  figure.includes("bytes")
    ? formatBytes(v)
    : figure.includes("per added")
      ? v.toPrecision(3)
      : v.toFixed(v >= 100 ? 0 : 2);

/** The records as a table, then the verdict line. */
export function printRecords(records: readonly FigureRecord[]): void {
  const rows = [
    ["mesh", "mode", "sidecars", "figure", "sluiced", "istiod", "sluiced/istiod"],
    ...records.map((r) => [
      r.mesh,
      r.mode,
      String(r.sidecars),
      r.figure,
      figureValue(r.figure, r.sluiced),
      figureValue(r.figure, r.istiod),
      `${r.ratio.toFixed(2)}x`,
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join("  "));
  console.log(`vs istiod: ${records.filter(atOrAhead).length} of ${records.length} figures at or ahead`);
}
