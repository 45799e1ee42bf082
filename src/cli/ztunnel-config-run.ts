// Where `sluice ztunnel-config` finds a ztunnel config dump, as istioctl's ztunnel-config: a file
// (--file, `-` for stdin), else the admin /config_dump (15000, --proxy-admin-port) of a ztunnel pod
// through a port-forward: the pod named, the ztunnel of the node named (--node), or one of the
// ztunnel DaemonSet's pods. A workload's pod named instead is looked up on its node's ztunnel, and the
// output is filtered to that workload.
import { readFileSync } from "node:fs";
import { KubeApiError } from "../sources/kube/index.ts";
import { multiError } from "./command-error.ts";
import { clusterAccess, type KubeAccess, type Pod, type PodRef } from "./kube-access.ts";
import { cliLog } from "./log.ts";
import { httpRequest } from "./proxy-config.ts";
import { parseZtunnelDump, type ZtunnelDump } from "./ztunnel-config-dump.ts";

export interface ZtunnelSourceArgs {
  pod?: string;
  file?: string;
  node?: string;
  proxyAdminPort: number;
  namespace?: string;
  istioNamespace: string;
  kubeconfig?: string;
  context?: string;
}

/** A dump, and the workload it is about when the command named a workload's pod. */
export interface LoadedDump {
  dump: ZtunnelDump;
  target?: PodRef;
}

const ZTUNNEL_DAEMONSET = "ztunnel";

/**
 * The dump the arguments name. `singlePod`: the command's content differs between ztunnels
 * (certificates, connections), so without a pod or node there must be exactly one.
 */
export async function loadZtunnelDump(argv: ZtunnelSourceArgs, singlePod: boolean): Promise<LoadedDump> {
  if (argv.file) return { dump: parseZtunnelDump(readDumpFile(argv.file)) };
  const kube = clusterAccess(argv);
  let pod: PodRef;
  if (argv.node) pod = await ztunnelOnNode(kube, argv.node, argv.istioNamespace);
  else pod = await namedPod(kube, argv.pod, argv.namespace || argv.istioNamespace, argv.pod ? false : singlePod);
  let target: PodRef | undefined;
  if (!(await isZtunnelPod(kube, pod))) {
    // A workload's pod: its node's ztunnel holds its config.
    const workload = await getPod(kube, pod).catch((err: Error) => {
      throw new Error(`failed to get pod ${pod.name}.${pod.namespace}: ${err.message}`);
    });
    const node = (workload as Pod & { spec?: { nodeName?: string } }).spec?.nodeName;
    if (!node) throw new Error(`pod ${pod.name}.${pod.namespace} is not scheduled to a node`);
    target = pod;
    pod = await ztunnelOnNode(kube, node, argv.istioNamespace).catch((err: Error) => {
      throw new Error(
        `failed to find ztunnel on node ${node} for pod ${target?.name}.${target?.namespace}: ${err.message}`,
      );
    });
  }
  let body: string;
  try {
    body = await kube.withPortForward(pod, argv.proxyAdminPort, (address) =>
      httpRequest("GET", `http://${address}/config_dump`),
    );
  } catch (err) {
    throw new Error(`failed to execute command on ${pod.name}.${pod.namespace} Ztunnel: ${(err as Error).message}`);
  }
  return { dump: parseZtunnelDump(body), target };
}

// istioctl's log levels; ztunnel knows `warning` as `warn` and has no `critical` (its `error`).
const LOG_LEVELS = new Set(["trace", "debug", "info", "warning", "warn", "error", "critical", "off"]);
const ZTUNNEL_LEVEL_NAMES: Record<string, string> = { warning: "warn", critical: "error" };

export interface ZtunnelLogArgs extends ZtunnelSourceArgs {
  level?: string;
  reset: boolean;
}

/**
 * istioctl's check of --level: each comma-separated entry a level, or `<logger>:<level>` (or `=`, the
 * logger possibly `<namespace>::`-prefixed); the first unknown level is the error.
 */
export function checkZtunnelLogLevels(levels: string): void {
  for (const entry of levels.split(",")) {
    let level = entry;
    if (entry.includes(":") || entry.includes("=")) {
      const logger = entry.includes("::") ? entry.slice(entry.lastIndexOf("::") + 2) : entry;
      const separator = logger.search(/[:=]/);
      level = separator < 0 ? "" : logger.slice(separator + 1);
    }
    if (!LOG_LEVELS.has(level)) throw new Error(`unrecognized logging level: ${level}`);
  }
}

/**
 * Sets (--level, --reset) and reads the logging levels of the named ztunnel pod, or of every pod of
 * the ztunnel DaemonSet, through its admin's /logging (always a POST, as istioctl's), each pod's
 * answer under its name. Every pod is tried; the failures come back together, after what did answer.
 */
export async function ztunnelLogLevels(argv: ZtunnelLogArgs): Promise<{ text: string; failure?: Error }> {
  const kube = clusterAccess(argv);
  let pods: PodRef[];
  if (argv.pod) {
    const pod = await namedPod(kube, argv.pod, argv.namespace || argv.istioNamespace, false);
    if (!(await isZtunnelPod(kube, pod))) {
      throw new Error(`workloads command is only supported by Ztunnel proxies: ${pod.name}`);
    }
    pods = [pod];
  } else {
    const all = await daemonSetPods(kube, ZTUNNEL_DAEMONSET, argv.istioNamespace);
    if (all.length === 0) throw new Error(`no pods match "daemonset/${ZTUNNEL_DAEMONSET}"`);
    pods = all.map((p) => ({ name: p.metadata.name, namespace: argv.istioNamespace }));
  }
  // The level a reset sets is istioctl's choice, not ztunnel's; istioctl warns so, and so does sluice.
  if (argv.reset) cliLog("default").warn('log level reset; using default value "info" for Ztunnel');
  const level = argv.reset ? "info" : (argv.level ?? "");
  // istioctl maps only a whole --level of `warning` or `critical` to ztunnel's names.
  const query = `level=${ZTUNNEL_LEVEL_NAMES[level] ?? level}${argv.reset ? "&reset" : ""}`;
  let text = "";
  const failures: string[] = [];
  for (const pod of pods) {
    try {
      const answer = await kube.withPortForward(pod, argv.proxyAdminPort, (address) =>
        httpRequest("POST", `http://${address}/logging?${query}`),
      );
      text += `${pod.name}.${pod.namespace}:\n${answer}\n`;
    } catch (err) {
      failures.push(`${pod.name}.${pod.namespace}: failed to execute command on Ztunnel: ${(err as Error).message}`);
    }
  }
  return failures.length > 0 ? { text, failure: multiError(failures) } : { text };
}

/** Go's words for why a file could not be read (`open <file>: no such file or directory`). */
const GO_FILE_ERRORS: Record<string, string> = {
  ENOENT: "open %s: no such file or directory",
  EACCES: "open %s: permission denied",
  EISDIR: "read %s: is a directory",
};

function readDumpFile(file: string): string {
  try {
    return readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (err) {
    const words = GO_FILE_ERRORS[(err as NodeJS.ErrnoException).code ?? ""];
    if (words) throw new Error(words.replace("%s", file));
    throw err;
  }
}

const getPod = (kube: KubeAccess, pod: PodRef) =>
  kube.client.request(
    "GET",
    `/api/v1/namespaces/${encodeURIComponent(pod.namespace)}/pods/${encodeURIComponent(pod.name)}`,
  ) as Promise<Pod>;

/** istioctl's IsZtunnelPod: the pod's app label is ztunnel, else (no such label or no pod) its name starts so. */
async function isZtunnelPod(kube: KubeAccess, pod: PodRef): Promise<boolean> {
  const byName = pod.name.startsWith("ztunnel");
  try {
    const app = (await getPod(kube, pod)).metadata.labels?.app;
    return app === undefined ? byName : app === "ztunnel";
  } catch {
    return byName;
  }
}

/**
 * The pod `ref` names (`name[.namespace]`, or `daemonset/name[.namespace]` for one of its pods; the
 * ztunnel DaemonSet's without `ref`), in `namespace` unless the reference names one.
 */
async function namedPod(kube: KubeAccess, ref: string | undefined, namespace: string, singlePod: boolean) {
  const lookup = ref ?? `daemonset/${ZTUNNEL_DAEMONSET}`;
  const slash = lookup.lastIndexOf("/");
  const dot = lookup.lastIndexOf(".");
  const [resource, ns] = dot > slash ? [lookup.slice(0, dot), lookup.slice(dot + 1)] : [lookup, namespace];
  if (slash < 0) return { name: resource, namespace: ns };
  const [type, name] = [resource.slice(0, slash), resource.slice(slash + 1)];
  if (type === "pod" || type === "pods" || type === "po") return { name, namespace: ns };
  if (!["daemonset", "daemonsets", "ds"].includes(type)) {
    throw new Error(`${JSON.stringify(resource)}: only pods and DaemonSets can name a ztunnel`);
  }
  const pods = await daemonSetPods(kube, name, ns);
  if (singlePod && pods.length !== 1) throw new Error("ztunnel pod name or --node must be set");
  if (pods.length === 0) throw new Error(`no pods match ${JSON.stringify(resource)}`);
  return { name: pods[0].metadata.name, namespace: ns };
}

/** The DaemonSet's pods (by its selector's labels), on `node` if given, in kubectl logs' order. */
async function daemonSetPods(kube: KubeAccess, name: string, namespace: string, node?: string): Promise<Pod[]> {
  let daemonSet: { spec?: { selector?: { matchLabels?: Record<string, string> } } };
  try {
    daemonSet = (await kube.client.request(
      "GET",
      `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/daemonsets/${encodeURIComponent(name)}`,
    )) as typeof daemonSet;
  } catch (err) {
    if (err instanceof KubeApiError && err.code === 404) throw new Error(`daemonsets.apps "${name}" not found`);
    throw err;
  }
  const labels = daemonSet.spec?.selector?.matchLabels;
  if (!labels) throw new Error("selector is required");
  const selector = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const query = `labelSelector=${encodeURIComponent(selector)}${node ? `&fieldSelector=${encodeURIComponent(`spec.nodeName=${node}`)}` : ""}`;
  const list = (await kube.client.request(
    "GET",
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods?${query}`,
  )) as {
    items?: Pod[];
  };
  return [...(list.items ?? [])].sort(byLogging);
}

/** The ztunnel DaemonSet's pod on `node` (istioctl's PodOnNodeFromDaemonset). */
async function ztunnelOnNode(kube: KubeAccess, node: string, istioNamespace: string): Promise<PodRef> {
  const pods = await daemonSetPods(kube, ZTUNNEL_DAEMONSET, istioNamespace, node);
  if (pods.length === 0) throw new Error("no pods found");
  return { name: pods[0].metadata.name, namespace: istioNamespace };
}

type LoggedPod = Pod & {
  spec?: { nodeName?: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
};

const PHASE_RANK: Record<string, number> = { Running: 0, Unknown: 1, Pending: 2 };

/** kubectl logs' preference (podutils.ByLogging), its first rules: scheduled, running, ready. */
function byLogging(a: LoggedPod, b: LoggedPod): number {
  const scheduled = (p: LoggedPod) => (p.spec?.nodeName ? 0 : 1);
  const phase = (p: LoggedPod) => PHASE_RANK[p.status?.phase ?? ""] ?? 3;
  const ready = (p: LoggedPod) =>
    p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? 0 : 1;
  return scheduled(a) - scheduled(b) || phase(a) - phase(b) || ready(a) - ready(b);
}
