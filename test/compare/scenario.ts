// Scenarios: cluster state (Kubernetes, Istio and Gateway API objects), the proxies to connect, and
// optionally a MeshConfig. See docs/compare.md for the format.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { parseAllDocuments, stringify } from "yaml";
import { BENCH_MESH, TEMPLATES } from "../../bench/templates.ts";
import type { ProxySpec } from "./proxies.ts";

/** A Kubernetes object of any kind, sent to the API server as it is. */
export type KubeObject = {
  apiVersion: string;
  kind: string;
  // biome-ignore lint/suspicious/noExplicitAny: metadata beyond name and namespace is passed through
  metadata: { name: string; namespace?: string; [k: string]: any };
  // biome-ignore lint/suspicious/noExplicitAny: the kind's own fields, read loosely by the loader
  [k: string]: any;
};

export interface Scenario {
  /** `inputs/<file>`, `benchmarks/<template>`, `examples/mesh` or the folder/file name of our own. */
  name: string;
  objects: KubeObject[];
  proxies: ProxySpec[];
  /** MeshConfig YAML; Istio's defaults when absent. */
  meshConfig?: string;
  /** Environment both control planes run with (`env.yaml`: e.g. PILOT_ENABLE_AMBIENT); none when absent. */
  env?: Record<string, string>;
}

const REPO = new URL("../..", import.meta.url).pathname;
export const OWN_SCENARIOS = join(REPO, "test/compare/scenarios");

function readObjects(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(file, "utf8"))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null && typeof o === "object" && typeof o.kind === "string");
}

const CLUSTER_SCOPED = new Set(["Namespace", "GatewayClass", "Node", "IngressClass", "ClusterRole"]);

/** Objects without a namespace land in `default`, as `kubectl apply` puts them. */
function withNamespaces(objects: KubeObject[]): KubeObject[] {
  for (const o of objects) {
    if (!CLUSTER_SCOPED.has(o.kind) && !o.metadata.namespace) o.metadata.namespace = "default";
  }
  return objects;
}

/**
 * The proxies of a scenario that names none: a sidecar `sleep` in every namespace its objects use,
 * the `istio-ingressgateway` router of a standard install, and a router for each Gateway API Gateway.
 */
export function defaultProxies(objects: readonly KubeObject[]): ProxySpec[] {
  const namespaces = new Set<string>();
  for (const o of objects) {
    if (o.kind === "Namespace") namespaces.add(o.metadata.name);
    else if (o.metadata.namespace && o.metadata.namespace !== "istio-system") namespaces.add(o.metadata.namespace);
  }
  if (namespaces.size === 0) namespaces.add("default");
  let n = 0;
  const ip = () => `10.250.0.${++n}`;
  const proxies: ProxySpec[] = [...namespaces].sort().map((namespace) => ({
    name: "sleep",
    kind: "sidecar",
    namespace,
    ip: ip(),
    labels: { app: "sleep" },
    serviceAccount: "sleep",
  }));
  proxies.push({
    name: "istio-ingressgateway",
    kind: "router",
    namespace: "istio-system",
    ip: ip(),
    labels: { app: "istio-ingressgateway", istio: "ingressgateway" },
    serviceAccount: "istio-ingressgateway-service-account",
  });
  // A router for each distinct selector of the Istio Gateways, in the first such Gateway's namespace.
  const selectors = new Set(['{"app":"istio-ingressgateway","istio":"ingressgateway"}', '{"istio":"ingressgateway"}']);
  for (const gw of objects.filter((o) => o.kind === "Gateway" && o.apiVersion.startsWith("networking.istio.io"))) {
    const selector = (gw.spec?.selector ?? {}) as Record<string, string>;
    const key = JSON.stringify(Object.fromEntries(Object.entries(selector).sort()));
    if (selectors.has(key) || Object.keys(selector).length === 0) continue;
    selectors.add(key);
    proxies.push({
      name: `gateway-${gw.metadata.name}`,
      kind: "router",
      namespace: gw.metadata.namespace ?? "default",
      ip: ip(),
      labels: selector,
      serviceAccount: `gateway-${gw.metadata.name}`,
    });
  }
  for (const gw of objects.filter(
    (o) => o.kind === "Gateway" && o.apiVersion.startsWith("gateway.networking.k8s.io"),
  )) {
    proxies.push({
      name: `${gw.metadata.name}-istio`,
      kind: "router",
      namespace: gw.metadata.namespace ?? "default",
      ip: ip(),
      labels: { "gateway.networking.k8s.io/gateway-name": gw.metadata.name },
      serviceAccount: `${gw.metadata.name}-istio`,
    });
  }
  return proxies;
}

function parseProxies(file: string): ProxySpec[] {
  const doc = parseAllDocuments(readFileSync(file, "utf8"))[0]?.toJS() as { proxies?: Partial<ProxySpec>[] } | null;
  const list = doc?.proxies;
  if (!Array.isArray(list)) throw new Error(`${file}: expected a top-level "proxies" list`);
  return list.map((p, i) => {
    for (const field of ["name", "kind", "namespace", "ip"] as const) {
      if (typeof p[field] !== "string") throw new Error(`${file}: proxies[${i}].${field} must be a string`);
    }
    if (!["sidecar", "router", "proxyless", "ztunnel", "waypoint"].includes(p.kind as string)) {
      throw new Error(`${file}: proxies[${i}].kind must be sidecar, router, proxyless, ztunnel or waypoint`);
    }
    return { labels: {}, serviceAccount: "default", ...p } as ProxySpec;
  });
}

/** A scenario's `env.yaml`: a map of environment variable names to string values. */
function parseEnv(file: string): Record<string, string> {
  const doc = parseAllDocuments(readFileSync(file, "utf8"))[0]?.toJS() as unknown;
  const entries = doc && typeof doc === "object" && !Array.isArray(doc) ? Object.entries(doc) : undefined;
  if (!entries || entries.some(([, v]) => typeof v !== "string")) {
    throw new Error(`${file}: expected a map of environment variable names to strings`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

/** A scenario from a folder (every YAML file but proxies, meshconfig and env) or one YAML file. */
export function scenarioFrom(path: string, name = basename(path).replace(/\.ya?ml$/, "")): Scenario {
  if (!statSync(path).isDirectory()) {
    const objects = withNamespaces(readObjects(path));
    return { name, objects, proxies: defaultProxies(objects) };
  }
  const files = readdirSync(path)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const objects = withNamespaces(
    files.filter((f) => !/^(proxies|meshconfig|env)\.ya?ml$/.test(f)).flatMap((f) => readObjects(join(path, f))),
  );
  const proxiesFile = files.find((f) => /^proxies\.ya?ml$/.test(f));
  const meshFile = files.find((f) => /^meshconfig\.ya?ml$/.test(f));
  const envFile = files.find((f) => /^env\.ya?ml$/.test(f));
  return {
    name,
    objects,
    proxies: proxiesFile ? parseProxies(join(path, proxiesFile)) : defaultProxies(objects),
    meshConfig: meshFile ? readFileSync(join(path, meshFile), "utf8") : undefined,
    ...(envFile ? { env: parseEnv(join(path, envFile)) } : {}),
  };
}

/** The benchmarks' mesh as YAML: Istio's defaults plus the `envoy-json` access-log provider. */
const BENCH_MESH_YAML = stringify({ extensionProviders: BENCH_MESH.extensionProviders });

/** Istio's benchmark templates rendered at 10 services, each with the proxy its benchmark runs. */
function benchmarkScenarios(): Scenario[] {
  return TEMPLATES.map((t) => {
    const objects = withNamespaces(t.render({ services: 10, instances: 10 }) as KubeObject[]);
    const proxy: ProxySpec = {
      name: "v0",
      kind: t.proxy === "router" ? "router" : "sidecar",
      namespace: "default",
      ip: "1.1.1.1",
      labels: { "istio.io/benchmark": "true" },
      serviceAccount: "default",
    };
    const others = defaultProxies(objects).filter((p) => !(p.namespace === "default" && p.kind === "sidecar"));
    return { name: `benchmarks/${t.name}`, objects, proxies: [proxy, ...others], meshConfig: BENCH_MESH_YAML };
  });
}

/**
 * Every scenario: Istio's inputs (read from the shared conformance folder), its benchmark templates,
 * the bundled example mesh, and ours under test/compare/scenarios (or `dir` instead of all of those).
 */
export function loadScenarios(conformanceRoot: string, dir?: string): Scenario[] {
  if (dir) return ownScenarios(dir, "");
  const inputs = join(conformanceRoot, "inputs");
  const shared = existsSync(inputs)
    ? readdirSync(inputs)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
        .map((f) => scenarioFrom(join(inputs, f), `inputs/${f.replace(/\.ya?ml$/, "")}`))
    : [];
  return [
    ...shared,
    ...benchmarkScenarios(),
    scenarioFrom(join(REPO, "examples/mesh"), "examples/mesh"),
    ...ownScenarios(OWN_SCENARIOS, "sluice/"),
  ];
}

function ownScenarios(dir: string, prefix: string): Scenario[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .map((entry) => scenarioFrom(join(dir, entry), `${prefix}${entry.replace(/\.ya?ml$/, "")}`));
}
