// What `sluice bug-report` does (bug-report.ts has its flags): collects from the kubeconfig's cluster
// what istioctl's bug-report collects, into bug-report.tar.gz under istioctl's folder names:
//   bug-report/versions                      the CLI's version, control plane and proxy versions
//   bug-report/cluster/...                   context and version, resources and custom resources as
//                                            YAML Lists, nodes, secrets (a table unless --full-secrets),
//                                            events, the Istio namespace's pods
//   bug-report/istio/<ns>/<pod>/...          each istiod pod's debug endpoints and metrics (port 15014,
//                                            through a port-forward) and discovery.log
//   bug-report/proxies/<ns>/<pod>/...        each sidecar's Envoy admin (15000) and istio-proxy.log
//   bug-report/operator|cni/...              istio-operator and istio-cni-node logs
//   bug-report/analyze/allNamespaces/...     an analysis of every namespace
//   bug-report/bug-report.log, summary       what was printed; what could not be collected, and why
// A part that cannot be collected (no kubelet to serve logs or port-forwards, a kind the API server
// does not serve, a debug endpoint a control plane lacks) is listed in the summary; the report goes on.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type GoDuration, parseGoDuration } from "../config/index.ts";
import { SLUICE_REVISION, SLUICE_VERSION } from "../util/version.ts";
import {
  type ContainerPath,
  filterLogLines,
  IGNORED_NAMESPACES,
  type LogStats,
  logStats,
  logsByPriority,
  Selection,
} from "./bug-report-select.ts";
import { clusterAccess, type KubeAccess } from "./kube-access.ts";
import { goYaml } from "./proxy-config-format.ts";
import { alignTabs } from "./proxy-config-tabwriter.ts";
import { gzipTar } from "./tar-archive.ts";

/** The archive's name, in the current directory or --output-dir. */
export const ARCHIVE_NAME = "bug-report.tar.gz";
/** The folder the archive unpacks into (without --dir). */
const ROOT = "bug-report";

/** istioctl's common.IstiodDebugURLs: asked of each istiod pod's monitoring port. */
export const ISTIOD_DEBUG_URLS = [
  "debug/adsz",
  "debug/authorizationz",
  "debug/cachez",
  "debug/clusterz",
  "debug/configz",
  "debug/endpointShardz",
  "debug/endpointz",
  "debug/inject",
  "debug/krtz",
  "debug/instancesz",
  "debug/mcsz",
  "debug/mesh",
  "debug/networkz",
  "debug/push_status",
  "debug/registryz",
  "debug/resourcesz",
  "debug/syncz",
  "debug/telemetryz",
  "debug/ambientz",
  "metrics",
];
/** istiod's monitoring port, where `pilot-discovery request GET` (istioctl's way in) sends them. */
const ISTIOD_MONITORING_PORT = 15014;
/** istioctl's common.ProxyDebugURLs: asked of each sidecar's Envoy admin. */
export const PROXY_DEBUG_URLS = [
  "certs",
  "clusters",
  "config_dump?include_eds",
  "listeners",
  "memory",
  "server_info",
  "stats/prometheus",
  "runtime",
];

/** The namespaced kinds of istioctl's `kubectl get all,jobs,ingresses,endpointslices,configmaps,networkpolicies`. */
const NAMESPACED_KINDS: readonly Kind[] = [
  { prefix: "/api/v1", plural: "pods" },
  { prefix: "/api/v1", plural: "replicationcontrollers" },
  { prefix: "/api/v1", plural: "services" },
  { prefix: "/apis/apps/v1", plural: "daemonsets" },
  { prefix: "/apis/apps/v1", plural: "deployments" },
  { prefix: "/apis/apps/v1", plural: "replicasets" },
  { prefix: "/apis/apps/v1", plural: "statefulsets" },
  { prefix: "/apis/autoscaling/v2", plural: "horizontalpodautoscalers" },
  { prefix: "/apis/batch/v1", plural: "cronjobs" },
  { prefix: "/apis/batch/v1", plural: "jobs" },
  { prefix: "/apis/networking.k8s.io/v1", plural: "ingresses" },
  { prefix: "/apis/discovery.k8s.io/v1", plural: "endpointslices" },
  { prefix: "/api/v1", plural: "configmaps" },
  { prefix: "/apis/networking.k8s.io/v1", plural: "networkpolicies" },
];
/** `kubectl get nodes,namespaces,customresourcedefinitions,mutatingwebhookconfigurations,validatingwebhookconfigurations`. */
const CLUSTER_KINDS: readonly Kind[] = [
  { prefix: "/api/v1", plural: "nodes" },
  { prefix: "/api/v1", plural: "namespaces" },
  { prefix: "/apis/apiextensions.k8s.io/v1", plural: "customresourcedefinitions" },
  { prefix: "/apis/admissionregistration.k8s.io/v1", plural: "mutatingwebhookconfigurations" },
  { prefix: "/apis/admissionregistration.k8s.io/v1", plural: "validatingwebhookconfigurations" },
];
// kubectl's server-side table, in either version.
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io";

interface Kind {
  /** /api/v1 or /apis/<group>/<version> */
  prefix: string;
  plural: string;
  clusterScoped?: boolean;
}

type KubeObject = {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { kind: string; name: string }[];
    creationTimestamp?: string;
  };
  [field: string]: unknown;
};

interface ListedPod extends KubeObject {
  metadata: NonNullable<KubeObject["metadata"]> & { name: string; namespace: string };
  spec?: { nodeName?: string; containers?: { name: string }[]; initContainers?: { name: string }[] };
  status?: { containerStatuses?: { name: string; restartCount?: number }[] };
}

export interface BugReportOptions {
  kubeconfig?: string;
  context?: string;
  istioNamespace: string;
  include: string[];
  exclude: string[];
  /** Where the archive goes (istioctl's --output-dir). */
  outputDir: string;
  /** istioctl's --dir: the files are written there too, and the archive holds them at its top. */
  dir?: string;
  fullSecrets: boolean;
  timeoutMs: number;
  /** The logs' time range, when --start-time, --end-time or --duration gave one. */
  since?: Date;
  until?: Date;
  tail: number;
  proxyAdminPort: number;
  concurrency: number;
  /** --critical-errs and --ignore-errs: globs over the logs' error lines, for their priority in the summary. */
  criticalErrors: readonly string[];
  ignoredErrors: readonly string[];
  skipClusterDump: boolean;
  skipAnalyze: boolean;
  skipProxyDebug: boolean;
  skipNetstat: boolean;
  skipCoredumps: boolean;
  dryRun: boolean;
  print(text: string): void;
}

/** The flags as istioctl reads them: Go durations, RFC 3339 times; an error message when they do not parse. */
export function logTimeRange(
  startTime: string | undefined,
  endTime: string | undefined,
  duration: string | undefined,
  now = new Date(),
): { since?: Date; until?: Date } | string {
  const rfc3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
  let until: Date | undefined;
  if (endTime) {
    if (!rfc3339.test(endTime))
      return `bad format for end-time: ${endTime}, expect RFC3339 e.g. 2006-01-02T15:04:05Z07:00`;
    until = new Date(endTime);
  }
  const since = duration ? goDuration(duration) : undefined;
  if (typeof since === "string") return since;
  if (since && since.nanos !== 0n) {
    if (startTime) return "only one --start-time or --duration may be set";
    return { since: new Date((until ?? now).getTime() - since.ms), until };
  }
  if (!startTime) return { until };
  if (!rfc3339.test(startTime))
    return `bad format for start-time: ${startTime}, expect RFC3339 e.g. 2006-01-02T15:04:05Z07:00`;
  const start = new Date(startTime);
  if (start.getTime() > (until ?? now).getTime())
    return "bad format for start-time and end-time: start-time is after end-time";
  return { since: start, until };
}

/** A Go duration's length, or its error. */
export function goDuration(text: string): GoDuration | string {
  const parsed = parseGoDuration(text);
  return "error" in parsed ? parsed.error : parsed;
}

/** What the report holds, and what it could not collect. */
class Report {
  /** Archive path below the root → text. */
  readonly files = new Map<string, string>();
  readonly missing: { item: string; why: string }[] = [];
  /** Each log collected (its path) → its error counts. */
  readonly logStats = new Map<string, LogStats>();
  readonly log: string[] = [];

  constructor(private readonly print: (text: string) => void) {}

  say(text: string): void {
    this.print(text);
    this.log.push(text);
  }

  /** As istioctl's writeFile: a blank text writes nothing. */
  write(path: string, text: string): void {
    if (text.trim() !== "") this.files.set(path, text);
  }

  miss(item: string, why: string): void {
    this.missing.push({ item, why });
    this.log.push(`not collected: ${item}: ${why}\n`);
  }
}

/** Runs `work` on each item, at most `limit` at once. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}

function why(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return "--timeout reached before it was collected";
  return err instanceof Error ? err.message : String(err);
}

/** The path of a kind's list, in `namespace` or across the cluster. */
function listPath(kind: Kind, namespace: string): string {
  return namespace && !kind.clusterScoped
    ? `${kind.prefix}/namespaces/${encodeURIComponent(namespace)}/${kind.plural}`
    : `${kind.prefix}/${kind.plural}`;
}

/** Runs the report; returns the archive's path (undefined on a dry run). */
export async function runBugReport(options: BugReportOptions): Promise<string | undefined> {
  const report = new Report(options.print);
  const selection = new Selection(options.include, options.exclude);
  const kube = clusterAccess(options);
  // Node's timers hold at most 2^31-1 ms.
  const signal = AbortSignal.timeout(Math.min(options.timeoutMs, 2 ** 31 - 1));
  const context = kube.currentContext();
  const started = new Date();
  report.say(`\n✅ Target cluster context: ${options.context || context.name}\n`);
  report.say(`\n✅ Cluster endpoint: ${context.server}\n`);

  const namespaces = selection.listedNamespaces(options.istioNamespace);
  const keeps = (o: KubeObject) => selection.keepsNamespace(o.metadata?.namespace ?? "", options.istioNamespace);
  const listItems = async (kind: Kind): Promise<KubeObject[]> => {
    const lists = await Promise.all(
      (kind.clusterScoped ? [""] : namespaces).map(
        (ns) => kube.client.request("GET", listPath(kind, ns), undefined, signal) as Promise<ListObject>,
      ),
    );
    return lists.flatMap((list) => {
      const itemKind = (list.kind ?? "").replace(/List$/, "");
      return (list.items ?? [])
        .map((item) => ({ apiVersion: list.apiVersion, kind: itemKind, ...item }))
        .filter((item) => kind.clusterScoped || keeps(item));
    });
  };

  // The pods whose containers' logs and state are collected (istioctl's resource tree): owned by a
  // Deployment (through a ReplicaSet) or a DaemonSet, selected by --include and --exclude.
  const [pods, replicaSets, daemonSets] = await Promise.all([
    listItems({ prefix: "/api/v1", plural: "pods" }) as Promise<ListedPod[]>,
    listItems({ prefix: "/apis/apps/v1", plural: "replicasets" }),
    listItems({ prefix: "/apis/apps/v1", plural: "daemonsets" }),
  ]).catch((err: unknown) => {
    throw new Error(`could not list the cluster's pods: ${why(err, signal)}`);
  });
  const paths = containerPaths(pods, replicaSets, daemonSets).filter((p) => selection.selects(p));
  const podsByKey = new Map(pods.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
  const cniPods = pods.filter((p) => p.metadata.labels?.["k8s-app"] === "istio-cni-node");
  report.say(`\n✅ Istio namespace: ${options.istioNamespace}\n`);
  report.say(
    `\n✅ Fetching logs for the following containers:\n\n${paths.map((p) => `${p.namespace}/${p.deployment}/${p.pod}/${p.container}`).join("\n")}\n`,
  );
  const archivePath = join(options.outputDir, ARCHIVE_NAME);
  if (options.dryRun) {
    report.say(`✅ Dry run, skipping archive creation at ${archivePath}.\n`);
    return undefined;
  }

  report.say("\n✅ Fetching Istio control plane information from cluster.\n\n");
  const tasks: Promise<void>[] = [clusterInfo(kube, report, context, options, signal)];
  if (!options.skipClusterDump) {
    tasks.push(clusterDump(kube, report, listItems, namespaces, keeps, options, signal));
  }
  // istioctl's GetPodInfo: the Istio namespace's pods (listed above with the others).
  report.write("cluster/pods", kubectlYaml(pods.filter((p) => p.metadata.namespace === options.istioNamespace)));
  await Promise.all(tasks);

  // Each selected container, as istioctl's gatherInfo: sidecars, istiod, the operator; then CNI.
  const controlPlanes: ControlPlaneState[] = [];
  await eachLimited(paths, options.concurrency, async (p) => {
    const pod = podsByKey.get(`${p.namespace}/${p.pod}`);
    const restarts = pod?.status?.containerStatuses?.find((c) => c.name === p.container)?.restartCount ?? 0;
    const logged = { ...p, nodeName: pod?.spec?.nodeName };
    if (p.container === "istio-proxy") {
      const dir = `proxies/${p.namespace}/${p.pod}`;
      if (!options.skipCoredumps) report.miss(`${dir}/cores`, EXEC_WHY("find and cat the core files"));
      if (!options.skipNetstat) report.miss(`${dir}/netstat`, EXEC_WHY("run netstat"));
      if (!options.skipProxyDebug)
        await fromPod(kube, report, p, options.proxyAdminPort, PROXY_DEBUG_URLS, dir, signal, "Envoy admin");
      await containerLog(kube, report, options, logged, restarts, `${dir}/istio-proxy.log`, signal);
    } else if (p.container === "discovery" && p.labels.app === "istiod") {
      const dir = `istio/${p.namespace}/${p.pod}`;
      const got = await fromPod(
        kube,
        report,
        p,
        ISTIOD_MONITORING_PORT,
        [...ISTIOD_DEBUG_URLS, "version"],
        dir,
        signal,
      );
      // /version is read for the versions file, as istioctl's GetIstioVersions reads it; it is not a file of its own.
      const version = report.files.get(`${dir}/version`);
      report.files.delete(`${dir}/version`);
      controlPlanes.push({
        path: p,
        version: got ? version?.trim() : undefined,
        syncz: report.files.get(`${dir}/debug/syncz`),
      });
      await containerLog(kube, report, options, logged, restarts, `${dir}/discovery.log`, signal);
    } else if (p.container === "istio-operator") {
      await containerLog(
        kube,
        report,
        options,
        logged,
        restarts,
        `operator/${p.namespace}/${p.pod}/operator.log`,
        signal,
      );
    }
  });
  report.say("\n✅ Fetching CNI logs from cluster.\n\n");
  await eachLimited(cniPods, options.concurrency, async (pod) => {
    const p = {
      namespace: pod.metadata.namespace,
      pod: pod.metadata.name,
      container: "",
      nodeName: pod.spec?.nodeName,
    };
    await containerLog(kube, report, options, p, 0, `cni/${pod.metadata.name}/cni.log`, signal);
  });
  report.write("versions", versionsText(pods, controlPlanes));

  if (!options.skipAnalyze) await analyze(kube, report, options, signal);

  report.write("summary", summaryText(report, options, context, started));
  report.write("bug-report.log", report.log.join(""));
  return writeArchive(report, options, archivePath);
}

interface ListObject {
  apiVersion?: string;
  kind?: string;
  items?: KubeObject[];
}

interface ControlPlaneState {
  path: ContainerPath;
  version?: string;
  syncz?: string;
}

const EXEC_WHY = (what: string) =>
  `istioctl would ${what} in the istio-proxy container (kubectl exec); sluice bug-report runs no commands in pods`;

/** istioctl's resource tree: each container of a pod a Deployment (through its ReplicaSet) or DaemonSet owns. */
function containerPaths(pods: ListedPod[], replicaSets: KubeObject[], daemonSets: KubeObject[]): ContainerPath[] {
  const deploymentOf = new Map<string, string>();
  for (const rs of replicaSets) {
    const owner = rs.metadata?.ownerReferences?.find((o) => o.kind === "Deployment");
    if (owner) deploymentOf.set(`${rs.metadata?.namespace}/${rs.metadata?.name}`, owner.name);
  }
  const daemonSetNames = new Set(daemonSets.map((ds) => `${ds.metadata?.namespace}/${ds.metadata?.name}`));
  const paths: ContainerPath[] = [];
  for (const pod of pods) {
    const { namespace, name } = pod.metadata;
    let owner: string | undefined;
    for (const ref of pod.metadata.ownerReferences ?? []) {
      if (ref.kind === "ReplicaSet") owner ??= deploymentOf.get(`${namespace}/${ref.name}`);
    }
    if (owner === undefined) {
      const ds = pod.metadata.ownerReferences?.find(
        (ref) => ref.kind === "DaemonSet" && daemonSetNames.has(`${namespace}/${ref.name}`),
      );
      owner = ds?.name;
    }
    if (owner === undefined) continue;
    const containers = [
      ...(pod.spec?.containers ?? []).map((c) => c.name),
      ...(pod.spec?.initContainers ?? []).filter((c) => c.name === "istio-proxy").map((c) => c.name),
    ];
    for (const container of containers) {
      paths.push({
        namespace,
        deployment: owner,
        pod: name,
        container,
        labels: pod.metadata.labels ?? {},
        annotations: pod.metadata.annotations ?? {},
      });
    }
  }
  return paths.sort((a, b) => {
    const ka = `${a.namespace}/${a.deployment}/${a.pod}/${a.container}`;
    const kb = `${b.namespace}/${b.deployment}/${b.pod}/${b.container}`;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}

/** istioctl's cluster-context (`kubectl config current-context` and the endpoint) and kubectl-version. */
async function clusterInfo(
  kube: KubeAccess,
  report: Report,
  context: { name: string; server: string },
  options: BugReportOptions,
  signal: AbortSignal,
): Promise<void> {
  report.write("cluster/cluster-context", `${options.context || context.name}\n${context.server}\n`);
  try {
    const version = (await kube.client.request("GET", "/version", undefined, signal)) as { gitVersion?: string };
    // kubectl version's lines; Sluice has no kubectl of its own, so the client line names sluice.
    report.write(
      "cluster/kubectl-version",
      `Client Version: sluice ${SLUICE_VERSION}\nServer Version: ${version.gitVersion ?? "unknown"}\n`,
    );
  } catch (err) {
    report.miss("cluster/kubectl-version", why(err, signal));
  }
}

/** istioctl's GetK8sResources, GetCRs, GetNodeInfo, GetSecrets and GetEvents. */
async function clusterDump(
  kube: KubeAccess,
  report: Report,
  listItems: (kind: Kind) => Promise<KubeObject[]>,
  namespaces: string[],
  keeps: (o: KubeObject) => boolean,
  options: BugReportOptions,
  signal: AbortSignal,
): Promise<void> {
  const listAll = async (kinds: readonly Kind[], file: string) => {
    const items: KubeObject[] = [];
    for (const kind of kinds) {
      try {
        items.push(...(await listItems(kind)));
      } catch (err) {
        report.miss(`${file} (${kind.plural})`, why(err, signal));
      }
    }
    report.write(file, kubectlYaml(items));
    return items;
  };
  const clusterKinds = CLUSTER_KINDS.map((k) => ({ ...k, clusterScoped: true }));
  const [, clusterItems] = await Promise.all([
    listAll(NAMESPACED_KINDS, "cluster/k8s-resources"),
    listAll(clusterKinds, "cluster/k8s-cluster-resources"),
    listAll([{ prefix: "/api/v1", plural: "nodes", clusterScoped: true }], "cluster/nodes"),
    (async () => {
      const secrets = { prefix: "/api/v1", plural: "secrets" };
      if (options.fullSecrets) await listAll([secrets], "cluster/secrets");
      else await table(kube, report, secrets, namespaces, keeps, "cluster/secrets", signal);
    })(),
    table(kube, report, { prefix: "/api/v1", plural: "events" }, namespaces, keeps, "cluster/events", signal, true),
  ]);
  // Every custom resource, of every CustomResourceDefinition (GetCRs).
  const crds = clusterItems.filter((o) => o.kind === "CustomResourceDefinition");
  await listAll(crds.flatMap(crdKind), "cluster/crs");
}

interface CrdSpec {
  group: string;
  scope: string;
  names: { plural: string };
  versions?: { name: string; served?: boolean; storage?: boolean }[];
}

function crdKind(crd: KubeObject): Kind[] {
  const spec = crd.spec as CrdSpec | undefined;
  const version = spec?.versions?.find((v) => v.storage && v.served) ?? spec?.versions?.find((v) => v.served);
  if (!spec || !version) return [];
  return [
    {
      prefix: `/apis/${spec.group}/${version.name}`,
      plural: spec.names.plural,
      clusterScoped: spec.scope === "Cluster",
    },
  ];
}

/** `kubectl get -o yaml` of several objects: a List. */
function kubectlYaml(items: KubeObject[]): string {
  return goYaml({ apiVersion: "v1", items, kind: "List", metadata: { resourceVersion: "" } } as never);
}

/**
 * `kubectl get <kind> -A` (`-o wide` when `wide`, sorted by creation time when `byCreation`), from
 * the API server's own table: for secrets, what is listed never includes their data.
 */
async function table(
  kube: KubeAccess,
  report: Report,
  kind: Kind,
  namespaces: string[],
  keeps: (o: KubeObject) => boolean,
  file: string,
  signal: AbortSignal,
  wideByCreation = false,
): Promise<void> {
  interface Table {
    columnDefinitions?: { name: string; priority?: number }[];
    rows?: { cells: unknown[]; object?: KubeObject }[];
  }
  try {
    const tables = await Promise.all(
      namespaces.map(
        async (ns) =>
          JSON.parse(await kube.client.getText(`${listPath(kind, ns)}?includeObject=Metadata`, TABLE, signal)) as Table,
      ),
    );
    const columns = tables[0]?.columnDefinitions ?? [];
    const shown = columns.flatMap((c, i) => (wideByCreation || !c.priority ? [i] : []));
    const rows = tables.flatMap((t) => t.rows ?? []).filter((r) => keeps(r.object ?? {}));
    if (wideByCreation) {
      const created = (r: (typeof rows)[number]) => r.object?.metadata?.creationTimestamp ?? "";
      rows.sort((a, b) => (created(a) < created(b) ? -1 : created(a) > created(b) ? 1 : 0));
    }
    if (rows.length === 0) return;
    const lines = [
      ["NAMESPACE", ...shown.map((i) => columns[i].name.toUpperCase())],
      ...rows.map((r) => [r.object?.metadata?.namespace ?? "", ...shown.map((i) => cellText(r.cells[i]))]),
    ];
    // kubectl's tabwriter: minimum width 6, padding 3.
    report.write(file, alignTabs(lines.map((l) => `${l.join("\t")}\n`).join(""), { minWidth: 6, padding: 3 }));
  } catch (err) {
    report.miss(file, why(err, signal));
  }
}

function cellText(cell: unknown): string {
  if (cell === null || cell === undefined) return "<none>";
  return typeof cell === "string" ? cell : JSON.stringify(cell);
}

/**
 * GETs each of `urls` from the pod's `port` through one port-forward, into files under `dir` named
 * by the URL (istioctl's layout); returns whether the forward worked. What fails is listed.
 */
async function fromPod(
  kube: KubeAccess,
  report: Report,
  p: { namespace: string; pod: string },
  port: number,
  urls: readonly string[],
  dir: string,
  signal: AbortSignal,
  what = "the control plane's monitoring port",
): Promise<boolean> {
  try {
    await kube.withPortForward({ name: p.pod, namespace: p.namespace }, port, async (address) => {
      const failures: [string, unknown][] = [];
      for (const url of urls) {
        try {
          const res = await fetch(`http://${address}/${url}`, { signal });
          const text = await res.text();
          if (!res.ok)
            throw new Error(
              `${what} answered HTTP ${res.status}${text.trim() ? `: ${text.trim().split("\n")[0]}` : ""}`,
            );
          report.write(`${dir}/${url}`, text);
        } catch (err) {
          failures.push([url, err]);
        }
      }
      // Nothing answered: the forward itself failed, which withPortForward reports.
      if (failures.length === urls.length && urls.length > 0) throw failures[0][1];
      for (const [url, err] of failures) report.miss(`${dir}/${url}`, why(err, signal));
    });
    return true;
  } catch (err) {
    report.miss(`${dir}/{${urls.join(",")}}`, `${what} (port ${port}) could not be reached: ${why(err, signal)}`);
    return false;
  }
}

/** A container's log (and its previous one after a restart), as istioctl's getLog, through the API server. */
async function containerLog(
  kube: KubeAccess,
  report: Report,
  options: BugReportOptions,
  p: { namespace: string; pod: string; container: string; nodeName?: string },
  restarts: number,
  file: string,
  signal: AbortSignal,
): Promise<void> {
  const query = (previous: boolean) => {
    const params = new URLSearchParams();
    if (p.container) params.set("container", p.container);
    if (previous) params.set("previous", "true");
    if (options.tail > 0) params.set("tailLines", String(options.tail));
    if (options.since) params.set("sinceTime", options.since.toISOString().replace(/\.\d+Z$/, "Z"));
    return `/api/v1/namespaces/${encodeURIComponent(p.namespace)}/pods/${encodeURIComponent(p.pod)}/log?${params}`;
  };
  // The API server answers an empty log for a pod no node runs: say why instead.
  if (!p.nodeName) {
    report.miss(file, "the pod is not scheduled on a node, so no kubelet holds its log");
    return;
  }
  try {
    let log = await kube.client.getText(query(false), "*/*", signal);
    if (restarts > 0) {
      const previous = await kube.client.getText(query(true), "*/*", signal);
      log = `========= Previous log present (appended at the end) =========\n\n${log}\n\n========= Previous log =========\n\n${previous}`;
    }
    const kept = filterLogLines(log, options.since, options.until);
    if (kept.trim() === "")
      report.miss(file, log.trim() === "" ? "the log is empty" : "no log lines in the time range");
    report.write(file, kept);
    if (kept.trim() !== "") report.logStats.set(file, logStats(kept, options.criticalErrors, options.ignoredErrors));
  } catch (err) {
    report.miss(file, `the API server gave no log (the kubelet serves them): ${why(err, signal)}`);
  }
}

/** istioctl's versions file: the CLI's, each control plane's (/version) and the proxies' (from syncz), by revision. */
function versionsText(pods: ListedPod[], controlPlanes: ControlPlaneState[]): string {
  const revisionOf = (labels: Record<string, string> | undefined) => labels?.["istio.io/rev"] || "default";
  const revisions = new Set<string>();
  for (const pod of pods) {
    const rev = pod.metadata.labels?.["istio.io/rev"] ?? pod.metadata.annotations?.["istio.io/rev"];
    if (rev) revisions.add(rev);
  }
  const planes = new Map<string, string[]>();
  const proxies = new Map<string, Set<string>>();
  for (const cp of controlPlanes) {
    const rev = revisionOf(cp.path.labels);
    revisions.add(rev);
    planes.set(rev, [...(planes.get(rev) ?? []), `${cp.path.pod}: ${cp.version ?? "(not reachable)"}`]);
    let statuses: unknown;
    try {
      statuses = JSON.parse(cp.syncz ?? "[]");
    } catch {
      statuses = [];
    }
    for (const s of Array.isArray(statuses) ? statuses : []) {
      const version = (s as { istio_version?: unknown }).istio_version;
      if (typeof version === "string") proxies.set(rev, (proxies.get(rev) ?? new Set()).add(version));
    }
  }
  let text = `CLI version:\nsluice ${SLUICE_VERSION} (${SLUICE_REVISION})\n\n`;
  text += "✅ The following Istio control plane revisions/versions were found in the cluster:\n";
  for (const rev of [...revisions].sort()) text += `Revision ${rev}:\n${(planes.get(rev) ?? []).join("\n")}\n\n`;
  text += "✅ The following proxy revisions/versions were found in the cluster:\n";
  for (const [rev, versions] of [...proxies].sort())
    text += `Revision ${rev}: Versions {${[...versions].sort().join(", ")}}\n`;
  return text;
}

/** istioctl's runAnalyze: every namespace, messages from Info up in log format. */
async function analyze(
  kube: KubeAccess,
  report: Report,
  options: BugReportOptions,
  signal: AbortSignal,
): Promise<void> {
  report.say("✅ Running Istio analyze on all namespaces and report as below:");
  const file = "analyze/allNamespaces/allNamespaces";
  if (signal.aborted) {
    report.miss(file, why(undefined, signal));
    return;
  }
  let out = "";
  const errors: string[] = [];
  try {
    const { ANALYZE_DEFAULTS, runAnalyzeCommand } = await import("./analyze-run.ts");
    await runAnalyzeCommand({
      ...ANALYZE_DEFAULTS,
      allNamespaces: true,
      istioNamespace: options.istioNamespace,
      cluster: kube.client,
      stdout: (text) => {
        out += text;
      },
      stderr: (text) => {
        errors.push(text);
      },
    });
  } catch (err) {
    report.miss(file, `the analysis failed: ${why(err, signal)}`);
    return;
  }
  report.say(`\n✅ Analysis Report:\n${out}\n`);
  for (const text of errors) report.log.push(text);
  report.write(file, out);
}

function summaryText(
  report: Report,
  options: BugReportOptions,
  context: { name: string; server: string },
  started: Date,
): string {
  const lines = [
    `sluice bug-report ${SLUICE_VERSION}, started ${started.toISOString()}`,
    `cluster context: ${options.context || context.name} (${context.server})`,
    `istio namespace: ${options.istioNamespace}`,
    `include: ${options.include.filter(Boolean).join(" ") || "(everything)"}`,
    `exclude: ${options.exclude.filter(Boolean).join(" ") || "(none)"} (and always ${IGNORED_NAMESPACES.join(",")} for pods)`,
    ...(options.criticalErrors.length > 0 ? [`critical-errs: ${options.criticalErrors.join(",")}`] : []),
    ...(options.ignoredErrors.length > 0 ? [`ignore-errs: ${options.ignoredErrors.join(",")}`] : []),
    `secrets: ${options.fullSecrets ? "in full (--full-secrets)" : "listed without their data (--full-secrets includes it)"}`,
    `collected: ${report.files.size} files`,
    "",
  ];
  if (report.missing.length === 0) lines.push("Everything asked for was collected.");
  else {
    lines.push(`Not collected (${report.missing.length}):`);
    const sorted = [...report.missing].sort((a, b) => (a.item < b.item ? -1 : a.item > b.item ? 1 : 0));
    for (const m of sorted) lines.push(`  ${m.item}: ${m.why.replace(/\s*\n\s*/g, " ")}`);
  }
  if (report.logStats.size > 0) {
    lines.push(
      "",
      "Logs by priority (a --critical-errs match first, then 1000 per fatal, 100 per error and 10 per warning line; --ignore-errs matches not counted):",
      ...logsByPriority(report.logStats).map((line) => `  ${line}`),
    );
  }
  return `${lines.join("\n")}\n`;
}

function writeArchive(report: Report, options: BugReportOptions, archivePath: string): string {
  const root = options.dir ? "" : `${ROOT}/`;
  const entries = [...report.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (options.dir) {
    for (const [path, text] of entries) {
      const target = join(options.dir, path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
  }
  options.print(`✅ Creating an archive at ${archivePath}.\n`);
  mkdirSync(dirname(archivePath), { recursive: true });
  writeFileSync(archivePath, gzipTar(entries.map(([path, data]) => ({ path: `${root}${path}`, data }))));
  options.print("✅ Done.\n");
  return archivePath;
}
