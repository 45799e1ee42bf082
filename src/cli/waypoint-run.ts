// The work of `sluice waypoint generate|apply|list|status|delete`, step for step as istioctl's waypoint
// command: a waypoint is a Gateway API Gateway of class istio-waypoint listening for HBONE on 15008,
// applied by server-side apply (field manager istioctl), its namespace optionally enrolled with the
// istio.io/use-waypoint label; listed and shown with their Programmed condition; deleted by name,
// revision or all.
import { KubeApiError, type KubeClient } from "../sources/kube/index.ts";
import { multiError } from "./command-error.ts";
import { alignTabs } from "./proxy-config-tabwriter.ts";
import { jsonToYaml } from "./ztunnel-config-dump.ts";

const GATEWAYS = "/apis/gateway.networking.k8s.io/v1";
const WAYPOINT_CLASS = "istio-waypoint";
const USE_WAYPOINT = "istio.io/use-waypoint";
const WAYPOINT_FOR = "istio.io/waypoint-for";
const REVISION_LABEL = "istio.io/rev";
const TRAFFIC_TYPES = ["all", "none", "service", "workload"];
/** Who owns the fields `waypoint apply` sets (server-side apply's field manager), as istioctl's. */
const FIELD_MANAGER = "istioctl";

export interface WaypointOptions {
  name: string;
  /** -n as given ("" without it). */
  namespace: string;
  trafficType: string;
  revision: string;
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

interface Gateway {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec?: { gatewayClassName?: string };
  status?: { conditions?: Condition[] };
}

/** The waypoint Gateway; `namespace` "" leaves it out (generate without -n). */
function waypointGateway(options: WaypointOptions, namespace: string): Record<string, unknown> {
  const name = options.name || "waypoint";
  if (name === "none")
    throw new Error("failed to create gateway: invalid name provided for waypoint, 'none' is a reserved value");
  const labels: Record<string, string> = {};
  if (options.trafficType) {
    if (!TRAFFIC_TYPES.includes(options.trafficType)) {
      throw new Error(
        `failed to create gateway: invalid traffic type: ${options.trafficType}. Valid options are: [${TRAFFIC_TYPES.join(" ")}]`,
      );
    }
    labels[WAYPOINT_FOR] = options.trafficType;
  }
  if (options.revision) labels[REVISION_LABEL] = options.revision;
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: {
      ...(Object.keys(labels).length > 0 ? { labels } : {}),
      name,
      ...(namespace ? { namespace } : {}),
    },
    spec: {
      gatewayClassName: WAYPOINT_CLASS,
      listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }],
    },
  };
}

/** `waypoint generate`: the Gateway as YAML. */
export function generateWaypoint(options: WaypointOptions): string {
  return jsonToYaml(JSON.stringify(waypointGateway(options, options.namespace)));
}

export interface ApplyOptions extends WaypointOptions {
  enrollNamespace: boolean;
  overwrite: boolean;
  /** Milliseconds to wait for the Programmed condition; undefined: no waiting. */
  waitFor?: number;
  /** The namespace the command works in (-n, else the kubeconfig's, else default). */
  targetNamespace: string;
  out: (text: string) => void;
}

const gatewaysPath = (namespace: string) =>
  namespace ? `${GATEWAYS}/namespaces/${encodeURIComponent(namespace)}/gateways` : `${GATEWAYS}/gateways`;

async function namespaceLabels(client: KubeClient, namespace: string) {
  try {
    return (await client.request("GET", `/api/v1/namespaces/${encodeURIComponent(namespace)}`)) as {
      metadata: { labels?: Record<string, string> };
    };
  } catch (err) {
    if (err instanceof KubeApiError && err.code === 404) throw new Error(`namespace: ${namespace} not found`);
    throw new Error(`failed to get namespace ${namespace}: ${(err as Error).message}`);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `waypoint apply`. */
export async function applyWaypoint(client: KubeClient, options: ApplyOptions): Promise<void> {
  const ns = options.targetNamespace;
  const hasWaypoint = !!(await namespaceLabels(client, ns)).metadata.labels?.[USE_WAYPOINT];
  if (options.enrollNamespace) {
    if (!options.overwrite && hasWaypoint) {
      options.out(
        `⚠️ Warning: namespace (${ns}) already has an enrolled Waypoint. Consider adding the \`--overwrite\` flag to your apply command.\n`,
      );
      return;
    }
    const labels = (
      await namespaceLabels(client, ns).catch((err: Error) => {
        throw new Error(`failed to check if namespace is labeled ambient: ${err.message}`);
      })
    ).metadata.labels;
    if (labels?.["istio.io/dataplane-mode"] !== "ambient") {
      options.out(
        `⚠️ Warning: namespace is not enrolled in ambient. Consider running\t\`kubectl label namespace ${ns} istio.io/dataplane-mode=ambient\`\n`,
      );
    }
  }
  const gateway = waypointGateway(options, ns);
  const name = (gateway.metadata as { name: string }).name;
  try {
    await client.patch(
      `${gatewaysPath(ns)}/${encodeURIComponent(name)}?fieldManager=${FIELD_MANAGER}`,
      gateway,
      "application/apply-patch+yaml",
    );
  } catch (err) {
    if (err instanceof KubeApiError && err.code === 404) {
      throw new Error(
        `missing Kubernetes Gateway CRDs need to be installed before applying a waypoint: ${(err as Error).message}`,
      );
    }
    throw err;
  }
  options.out(`✅ waypoint ${ns}/${name} applied\n`);
  if (options.waitFor !== undefined) {
    const start = Date.now();
    for (;;) {
      await sleep(1000);
      const got = await getGateway(client, ns, name);
      if (!(got instanceof Error) && programmed(got)) break;
      if (Date.now() - start > options.waitFor) {
        // istioctl names the Gateway it read: an empty one when the read failed.
        const where = got instanceof Error ? `/: ${got.message}` : `${got.metadata.namespace}/${got.metadata.name}`;
        throw new Error(`timed out while waiting for waypoint\t${where}`);
      }
    }
    options.out(`✅ waypoint ${ns}/${name} is ready!\n`);
  }
  if (options.enrollNamespace) {
    const namespace = (await namespaceLabels(client, ns).catch((err: Error) => {
      throw new Error(`failed to label namespace with waypoint: ${err.message}`);
    })) as { metadata: { labels?: Record<string, string> } };
    namespace.metadata.labels = { ...namespace.metadata.labels, [USE_WAYPOINT]: name };
    try {
      await client.request("PUT", `/api/v1/namespaces/${encodeURIComponent(ns)}`, namespace);
    } catch (err) {
      throw new Error(
        `failed to label namespace with waypoint: failed to update namespace ${ns}: ${(err as Error).message}`,
      );
    }
    options.out(`✅ namespace ${ns} labeled with "${USE_WAYPOINT}: ${name}"\n`);
  }
}

async function getGateway(client: KubeClient, namespace: string, name: string): Promise<Gateway | Error> {
  try {
    return (await client.request("GET", `${gatewaysPath(namespace)}/${encodeURIComponent(name)}`)) as Gateway;
  } catch (err) {
    return err as Error;
  }
}

const programmed = (g: Gateway) =>
  (g.status?.conditions ?? []).some((c) => c.type === "Programmed" && c.status === "True");

/** The namespace's (all namespaces' for "") Gateways, by namespace and name; undefined when there are none. */
async function listGateways(client: KubeClient, namespace: string, labelSelector = ""): Promise<Gateway[]> {
  const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : "";
  const items = ((await client.request("GET", `${gatewaysPath(namespace)}${query}`)) as { items?: Gateway[] }).items;
  const key = (g: Gateway) => [g.metadata.namespace, g.metadata.name];
  return (items ?? []).sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0;
  });
}

const isWaypoint = (g: Gateway) => g.spec?.gatewayClassName === WAYPOINT_CLASS;
const table = (rows: string[][]) =>
  alignTabs(rows.map((r) => `${r.join("\t")}\n`).join(""), { minWidth: 0, padding: 5 });
const NO_WAYPOINTS = "No waypoints found.\n";

/** `waypoint list`: "" namespace is every namespace (-A). */
export async function listWaypoints(client: KubeClient, namespace: string): Promise<string> {
  const gateways = await listGateways(client, namespace);
  if (gateways.length === 0) return NO_WAYPOINTS;
  const all = namespace === "";
  const rows = [[...(all ? ["NAMESPACE"] : []), "NAME", "REVISION", "TRAFFIC TYPE", "PROGRAMMED"]];
  for (const g of gateways.filter(isWaypoint)) {
    const labels = g.metadata.labels ?? {};
    const condition = (g.status?.conditions ?? []).filter((c) => c.type === "Programmed").at(-1);
    rows.push([
      ...(all ? [g.metadata.namespace] : []),
      g.metadata.name,
      labels[REVISION_LABEL] || "default",
      labels[WAYPOINT_FOR] || "none",
      condition?.status ?? "False",
    ]);
  }
  return table(rows);
}

/**
 * `waypoint status`: each waypoint's Programmed condition (else its last condition), read a second
 * apart until it is programmed (or once, without `waitFor`); undefined `waitFor` does not wait.
 */
export async function waypointStatus(client: KubeClient, namespace: string, waitFor: number | undefined) {
  const gateways = await listGateways(client, namespace);
  if (gateways.length === 0) return NO_WAYPOINTS;
  const all = namespace === "";
  const rows = [[...(all ? ["NAMESPACE"] : []), "NAME", "STATUS", "TYPE", "REASON", "MESSAGE"]];
  const start = Date.now();
  // istioctl keeps the condition it looked at last from one waypoint to the next.
  let shown: Condition = { type: "", status: "" };
  for (const g of gateways.filter(isWaypoint)) {
    for (;;) {
      await sleep(1000);
      const got = await getGateway(client, g.metadata.namespace, g.metadata.name);
      const read = got instanceof Error ? undefined : got;
      const conditions = read?.status?.conditions ?? [];
      shown = conditions.find((c) => c.type === "Programmed" && c.status === "True") ?? conditions.at(-1) ?? shown;
      const ready = read !== undefined && programmed(read);
      rows.push([
        ...(all ? [read?.metadata.namespace ?? ""] : []),
        read?.metadata.name ?? "",
        shown.status,
        shown.type,
        shown.reason ?? "",
        shown.message ?? "",
      ]);
      if (waitFor === undefined || ready) break;
      if (Date.now() - start > waitFor) {
        const where = read ? `${read.metadata.namespace}/${read.metadata.name}` : `/: ${(got as Error).message}`;
        throw new Error(`failed to print waypoint status: timed out while retrieving status for waypoint\t${where}`);
      }
    }
  }
  return table(rows);
}

/**
 * `waypoint delete`: the waypoints `names` names (each missing one reported), or without names every
 * waypoint of the namespace (of `revision` when given). Failures are gathered as istioctl's multierror.
 */
export async function deleteWaypoints(
  client: KubeClient,
  namespace: string,
  names: string[] | undefined,
  revision: string,
  out: (text: string) => void,
): Promise<void> {
  let doomed: string[];
  if (names === undefined) {
    const selector = revision ? `${REVISION_LABEL}=${revision}` : "";
    doomed = (await listGateways(client, namespace, selector)).filter(isWaypoint).map((g) => g.metadata.name);
  } else {
    const waypoints = new Set((await listGateways(client, namespace)).filter(isWaypoint).map((g) => g.metadata.name));
    doomed = names.filter((name) => {
      if (!waypoints.has(name)) out(`waypoint ${namespace}/${name} not found\n`);
      return waypoints.has(name);
    });
  }
  const failures: string[] = [];
  for (const name of doomed) {
    try {
      await client.request("DELETE", `${gatewaysPath(namespace)}/${encodeURIComponent(name)}`);
      out(`waypoint ${namespace}/${name} deleted\n`);
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) out(`waypoint ${namespace}/${name} not found\n`);
      else failures.push((err as Error).message);
    }
  }
  if (failures.length > 0) throw multiError(failures);
}

/** A Go duration (`90s`, `1m30s`, `500ms`) in milliseconds; throws on anything else. */
export function parseGoDuration(text: string): number {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  if (text === "0") return 0;
  const parts = /^([-+]?)((?:\d*\.?\d+(?:ns|us|µs|ms|s|m|h))+)$/.exec(text);
  if (!parts) throw new Error(`time: invalid duration "${text}"`);
  let total = 0;
  for (const [, value, unit] of parts[2].matchAll(/(\d*\.?\d+)(ns|us|µs|ms|s|m|h)/g))
    total += Number(value) * units[unit];
  return parts[1] === "-" ? -total : total;
}
