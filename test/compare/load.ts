// Loads a scenario into the test cluster and takes it out again. There is no kubelet and no
// endpoint controller here, so the harness plays both: it sets each Pod's status (IP, Ready) and
// writes the EndpointSlice of each Service with a selector from the Pods it selects.
import { KINDS } from "../../src/config/kinds.ts";
import type { Cluster } from "../cluster/index.ts";
import { proxyPod } from "./proxies.ts";
import type { KubeObject, Scenario } from "./scenario.ts";

/** Where the API server keeps built-in kinds: kind → [group/version path prefix, plural, namespaced]. */
const BUILT_IN: Record<string, [string, string, boolean]> = {
  Namespace: ["/api/v1", "namespaces", false],
  Node: ["/api/v1", "nodes", false],
  Service: ["/api/v1", "services", true],
  Pod: ["/api/v1", "pods", true],
  ServiceAccount: ["/api/v1", "serviceaccounts", true],
  Secret: ["/api/v1", "secrets", true],
  ConfigMap: ["/api/v1", "configmaps", true],
  Endpoints: ["/api/v1", "endpoints", true],
  EndpointSlice: ["/apis/discovery.k8s.io/v1", "endpointslices", true],
  Deployment: ["/apis/apps/v1", "deployments", true],
  Ingress: ["/apis/networking.k8s.io/v1", "ingresses", true],
  IngressClass: ["/apis/networking.k8s.io/v1", "ingressclasses", false],
};

/** The collection path of an object's kind (POST there), or undefined when the cluster has no such kind. */
export function collectionPath(o: KubeObject): string | undefined {
  const ns = o.metadata.namespace;
  const builtIn = BUILT_IN[o.kind];
  if (builtIn && (o.apiVersion === "v1" || builtIn[0].endsWith(`/${o.apiVersion}`))) {
    const [prefix, plural, namespaced] = builtIn;
    return namespaced ? `${prefix}/namespaces/${ns}/${plural}` : `${prefix}/${plural}`;
  }
  const [group, version] = o.apiVersion.split("/");
  const kind = KINDS.find((k) => k.group === group && k.kind === o.kind);
  if (!kind || !version) return undefined;
  return kind.namespaced
    ? `/apis/${group}/${version}/namespaces/${ns}/${kind.plural}`
    : `/apis/${group}/${version}/${kind.plural}`;
}

export interface Loaded {
  /** Every object created, as `<path>/<name>`, in creation order. */
  created: string[];
  /** Istio and Gateway API objects created: what both control planes must have read. */
  configs: { kind: string; namespace?: string; name: string }[];
  /** Objects the cluster refused or has no kind for, each with the reason. */
  refused: string[];
}

const selects = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** The slice the endpoint controller would write for a Service from the ready Pods it selects. */
function endpointSlice(service: KubeObject, pods: readonly { pod: KubeObject; ip: string }[]): KubeObject | undefined {
  const selector = service.spec?.selector as Record<string, string> | undefined;
  if (!selector || service.spec?.type === "ExternalName") return undefined;
  const ns = service.metadata.namespace;
  const selected = pods.filter((p) => p.pod.metadata.namespace === ns && selects(selector, p.pod.metadata.labels));
  const containerPorts = (pod: KubeObject) =>
    (pod.spec?.containers ?? []).flatMap((c: { ports?: { name?: string; containerPort: number }[] }) => c.ports ?? []);
  // A named targetPort resolves per Pod; the slice takes the first selected Pod's number, as one slice would.
  const ports = (service.spec?.ports ?? []).map(
    (p: { name?: string; port: number; targetPort?: number | string; protocol?: string }) => {
      let port = typeof p.targetPort === "number" ? p.targetPort : p.port;
      if (typeof p.targetPort === "string") {
        const named = selected
          .flatMap((s) => containerPorts(s.pod))
          .find((c: { name?: string }) => c.name === p.targetPort);
        if (named) port = named.containerPort;
      }
      return { ...(p.name ? { name: p.name } : {}), port, protocol: p.protocol ?? "TCP" };
    },
  );
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `${service.metadata.name}-compare`,
      namespace: ns,
      labels: {
        "kubernetes.io/service-name": service.metadata.name,
        "endpointslice.kubernetes.io/managed-by": "compare",
      },
    },
    addressType: "IPv4",
    endpoints: selected.map((s) => ({
      addresses: [s.ip],
      conditions: { ready: true },
      nodeName: "node-0",
      targetRef: { kind: "Pod", name: s.pod.metadata.name, namespace: ns },
    })),
    ports,
  };
}

/** The order objects are created in: what others refer to first. */
const ORDER = ["Namespace", "ServiceAccount", "Secret", "ConfigMap", "Service", "Pod"];
const rank = (o: KubeObject) => {
  const i = ORDER.indexOf(o.kind);
  return i < 0 ? ORDER.length : i;
};

/** What a scenario gives a namespace it uses: labels and annotations. */
interface NamespaceMeta {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** Namespaces the scenario's objects and proxies live in, with the labels and annotations the scenario gives each. */
function namespacesOf(scenario: Scenario): Map<string, NamespaceMeta> {
  const out = new Map<string, NamespaceMeta>();
  for (const o of scenario.objects) {
    if (o.kind === "Namespace")
      out.set(o.metadata.name, { labels: { ...o.metadata.labels }, annotations: { ...o.metadata.annotations } });
  }
  const uses = [...scenario.objects.map((o) => o.metadata.namespace), ...scenario.proxies.map((p) => p.namespace)];
  for (const ns of uses) if (ns && !out.has(ns)) out.set(ns, { labels: {}, annotations: {} });
  return out;
}

/**
 * Namespaces stay between scenarios (deleting one takes the namespace controller seconds); each
 * scenario sets the labels and annotations of those it uses to exactly its own.
 */
async function ensureNamespace(cluster: Cluster, name: string, meta: NamespaceMeta): Promise<void> {
  const path = `/api/v1/namespaces/${name}`;
  const got = await cluster.request("GET", path);
  const body = { apiVersion: "v1", kind: "Namespace", metadata: { name, ...meta } };
  if (got.status === 404) {
    await cluster.must("POST", "/api/v1/namespaces", body);
    return;
  }
  const labels = { "kubernetes.io/metadata.name": name, ...meta.labels };
  if (
    JSON.stringify(got.body.metadata.labels ?? {}) === JSON.stringify(labels) &&
    JSON.stringify(got.body.metadata.annotations ?? {}) === JSON.stringify(meta.annotations)
  )
    return;
  await cluster.must("PUT", path, {
    ...body,
    metadata: { ...body.metadata, labels, resourceVersion: got.body.metadata.resourceVersion },
  });
}

/** Creates everything a scenario holds (and the Pods behind its proxies) in the cluster. */
export async function loadScenario(cluster: Cluster, scenario: Scenario): Promise<Loaded> {
  const loaded: Loaded = { created: [], configs: [], refused: [] };
  for (const [ns, meta] of namespacesOf(scenario)) await ensureNamespace(cluster, ns, meta);

  const objects = scenario.objects.filter((o) => o.kind !== "Namespace").map((o) => structuredClone(o));
  const pods: { pod: KubeObject; ip: string; status: object }[] = [];
  for (const p of scenario.proxies) {
    const { pod, status } = proxyPod(p);
    pods.push({ pod: pod as KubeObject, ip: p.ip, status });
    objects.push({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: p.serviceAccount, namespace: p.namespace },
    });
  }
  for (const o of objects.filter((o) => o.kind === "Pod")) {
    const ip = o.status?.podIP as string | undefined;
    if (ip)
      pods.push({
        pod: o,
        ip,
        status: { phase: "Running", podIP: ip, podIPs: [{ ip }], conditions: [{ type: "Ready", status: "True" }] },
      });
  }
  // A Service without a clusterIP gets a fixed one, so that names built from it (listeners) are the same every run.
  let nextIp = 0;
  for (const o of objects.filter((o) => o.kind === "Service")) {
    if (o.spec?.type !== "ExternalName" && o.spec?.clusterIP === undefined) {
      nextIp++;
      o.spec = { ...o.spec, clusterIP: `10.96.${1 + (nextIp >> 8)}.${nextIp & 255}` };
    }
  }
  const sliced = new Set(
    objects
      .filter((o) => o.kind === "EndpointSlice")
      .map((o) => `${o.metadata.namespace}/${o.metadata.labels?.["kubernetes.io/service-name"]}`),
  );
  for (const s of objects.filter((o) => o.kind === "Service")) {
    if (sliced.has(`${s.metadata.namespace}/${s.metadata.name}`)) continue;
    const slice = endpointSlice(s, pods);
    if (slice) objects.push(slice);
  }
  const seen = new Set<string>();
  const all = [...objects.filter((o) => o.kind !== "Pod"), ...pods.map((p) => p.pod)]
    .sort((a, b) => rank(a) - rank(b))
    .filter((o) => {
      const key = `${o.apiVersion}/${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });

  for (const o of all) {
    const path = collectionPath(o);
    const what = `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`;
    if (!path) {
      loaded.refused.push(`${what}: no such kind in the cluster`);
      continue;
    }
    const { status, ...body } = o;
    const res = await cluster.request("POST", path, o.kind === "Pod" ? body : o);
    if (res.status >= 300) {
      loaded.refused.push(`${what}: ${res.status} ${res.body?.message ?? res.text}`);
      continue;
    }
    const objectPath = `${path}/${o.metadata.name}`;
    loaded.created.push(objectPath);
    if (o.kind === "Pod") {
      const podStatus = pods.find(
        (p) =>
          p.pod === o || (p.pod.metadata.name === o.metadata.name && p.pod.metadata.namespace === o.metadata.namespace),
      )?.status;
      await cluster.must(
        "PATCH",
        `${objectPath}/status`,
        { status: podStatus },
        { "content-type": "application/merge-patch+json" },
      );
    }
    // A status the scenario gives (a Gateway's addresses, which no controller here would write) is set as given.
    if (o.kind !== "Pod" && status !== undefined) {
      await cluster.must(
        "PATCH",
        `${objectPath}/status`,
        { status },
        { "content-type": "application/merge-patch+json" },
      );
    }
    if (!BUILT_IN[o.kind])
      loaded.configs.push({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name });
  }
  return loaded;
}

/** Deletes what `loadScenario` created, newest first (Pods at once: no kubelet will confirm). */
export async function unloadScenario(cluster: Cluster, loaded: Loaded): Promise<void> {
  for (const path of [...loaded.created].reverse()) {
    const res = await cluster.request("DELETE", `${path}?gracePeriodSeconds=0`);
    if (res.status >= 300 && res.status !== 404) {
      throw new Error(`DELETE ${path}: ${res.status} ${res.body?.message ?? res.text}`);
    }
  }
}
