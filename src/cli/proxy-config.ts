// What `sluice proxy-config` does (proxy-config-command.ts has its flags): reads a proxy's config
// dump from a file, an Envoy admin, the cluster's pod (through a port-forward) or the control plane
// (over xDS or HTTP), and writes it as istioctl does; reads and sets the Envoy's log levels.
import { readFileSync } from "node:fs";
import type { DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";
import { admin, cluster, endpoint, listener, route } from "../api/index.ts";
import { DEBUG_TYPE_PREFIX } from "../xds/types.ts";
import { type ControlPlaneArgs, usesCluster } from "./control-plane-options.ts";
import { clusterAccess, hasEnvoySidecar, type KubeAccess, type Pod } from "./kube-access.ts";
import { cliLog } from "./log.ts";
import type { Kind, ProxyConfigOutputFormat, ProxyDumpArgs } from "./proxy-config-args.ts";
import { goJson, goMarshalIndent, goYaml, protoJson } from "./proxy-config-format.ts";
import {
  bootstrapOf,
  bootstrapSummary,
  type ClusterFilter,
  type ConfigDump,
  clusterSummary,
  type EndpointFilter,
  ecdsSummary,
  endpointSummary,
  filterClusters,
  filterEndpoints,
  filterListeners,
  filterRoutes,
  fullSummary,
  type ListenerFilter,
  list,
  listenerSummary,
  parseConfigDump,
  type RouteFilter,
  routeSummary,
  secretSummary,
} from "./proxy-config-writer.ts";
import { debugBodies, requestControlPlanes } from "./xds-client.ts";

/** Envoy's admin port in an Istio sidecar (istioctl's --proxy-admin-port default). */
const ENVOY_ADMIN_PORT = 15000;

/** Where the dump comes from: --file, an Envoy admin, the cluster's pod, or the control plane. */
export async function loadDump(argv: ProxyDumpArgs): Promise<ConfigDump> {
  if (argv.file) return parseConfigDump(readFileSync(argv.file, "utf8"));
  const admin = argv["proxy-admin-address"];
  if (admin) return parseConfigDump(await httpRequest("GET", `http://${admin}/config_dump?include_eds`));
  if (!argv.proxy) throw new Error("name a pod or proxy ID, or give --file");
  const monitoring = argv["monitoring-address"];
  if (monitoring) {
    const query = `proxyID=${encodeURIComponent(argv.proxy)}&include_eds`;
    return parseConfigDump(await httpRequest("GET", `http://${monitoring}/debug/config_dump?${query}`));
  }
  if (!usesCluster(argv)) return controlPlaneDump(argv, argv.proxy);
  const { kube, pod } = await resolvePod(argv, argv.proxy);
  const { name, namespace } = pod.metadata;
  // A proxyless gRPC pod has no Envoy to ask: the control plane knows its config (proxy ID pod.namespace).
  if (!hasEnvoySidecar(pod)) return controlPlaneDump(argv, `${name}.${namespace}`);
  const body = await kube.withPortForward(pod.metadata, ENVOY_ADMIN_PORT, (address) =>
    httpRequest("GET", `http://${address}/config_dump?include_eds`),
  );
  return parseConfigDump(body);
}

/** The pod a proxy argument (`name[.namespace]`) names: in -n, else the kubeconfig context's namespace. */
async function resolvePod(argv: ProxyDumpArgs, ref: string): Promise<{ kube: KubeAccess; pod: Pod }> {
  const kube = clusterAccess(argv);
  return { kube, pod: await kube.pod(ref, kube.namespaceOrDefault(argv.namespace)) };
}

/** The control plane's config dump of a connected proxy (with its endpoints), over xDS. */
export async function controlPlaneDump(argv: ControlPlaneArgs, proxy: string): Promise<ConfigDump> {
  const query = `proxyID=${encodeURIComponent(proxy)}&include_eds`;
  const [response] = await requestControlPlanes(argv, `${DEBUG_TYPE_PREFIX}config_dump`, [query], "first");
  const [body] = response ? debugBodies(response) : [];
  if (body === undefined) throw new Error(`the control plane sent no config dump for ${proxy}`);
  if (!body.trimStart().startsWith("{")) throw new Error(`the control plane: ${body.trim()}`);
  return parseConfigDump(body);
}

export async function httpRequest(method: "GET" | "POST", url: string): Promise<string> {
  const res = await fetch(url, { method, signal: AbortSignal.timeout(30_000) });
  cliLog("http").debug({ method, url, status: res.status }, "HTTP request");
  const text = await res.text();
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status} ${text.trim()}`);
  return text;
}

/**
 * The proxy's Envoy logging levels, from its admin (--proxy-admin-address, or the pod's through a
 * port-forward), after setting `level` (<level> or <logger>:<level>,...) if given.
 */
export async function proxyLogLevels(argv: ProxyDumpArgs, level: string | undefined): Promise<string> {
  const query = (level ?? "")
    .split(",")
    .filter((l) => l !== "")
    .map((l) => (l.includes(":") ? l.replace(":", "=") : `level=${l}`))
    .join("&");
  const logging = (address: string) => httpRequest("POST", `http://${address}/logging${query ? `?${query}` : ""}`);
  const admin = argv["proxy-admin-address"];
  if (admin) return logging(admin);
  if (argv.proxy && usesCluster(argv)) {
    const { kube, pod } = await resolvePod(argv, argv.proxy);
    if (!hasEnvoySidecar(pod)) {
      throw new Error(
        `pod ${pod.metadata.name}.${pod.metadata.namespace} runs no Envoy (proxyless gRPC): no log levels`,
      );
    }
    return kube.withPortForward(pod.metadata, ENVOY_ADMIN_PORT, logging);
  }
  throw new Error(
    "proxy-config log needs the proxy's Envoy admin: name a pod (with a kubeconfig) or pass --proxy-admin-address",
  );
}

/** Filters of the proxy-config commands (each kind reads its own). */
export interface ProxyConfigFilters {
  cluster: ClusterFilter;
  listener: ListenerFilter;
  route: RouteFilter;
  endpoint: EndpointFilter;
}

/** What `proxy-config <kind> -o <format>` prints for the dump. */
export function proxyConfigOutput(
  kind: Kind,
  dump: ConfigDump,
  filters: ProxyConfigFilters,
  format: ProxyConfigOutputFormat,
  withHeaders = false,
): string {
  if (format === "short") {
    const summaries: Record<Kind, () => string> = {
      cluster: () => clusterSummary(dump, filters.cluster, false),
      listener: () => listenerSummary(dump, filters.listener, false),
      route: () => routeSummary(dump, filters.route, false),
      endpoint: () => endpointSummary(dump, filters.endpoint, false),
      secret: () => secretSummary(dump, false),
      bootstrap: () => bootstrapSummary(dump),
      ecds: () => ecdsSummary(dump),
      all: () => fullSummary(dump, filters, withHeaders),
    };
    return summaries[kind]();
  }
  // Lists of resources as Go's json.MarshalIndent writes them, dump sections as protomarshal does.
  const asList = (schema: DescMessage, values: JsonObject[]) => values.map((v) => protoJson(schema, v));
  const section = (type: string) =>
    dump.configs.find((c) => c["@type"] === `type.googleapis.com/envoy.admin.v3.${type}`) ?? {};
  // Envoy writes one EcdsConfigDump per filter type; istioctl prints them as one.
  const ecdsFilters = dump.configs
    .filter((c) => c["@type"] === "type.googleapis.com/envoy.admin.v3.EcdsConfigDump")
    .flatMap((c) => list(c, "ecds_filters"));
  const outputs: Record<Kind, () => [JsonValue, "list" | "section"]> = {
    cluster: () => [asList(cluster.ClusterSchema, filterClusters(dump, filters.cluster)), "list"],
    listener: () => [asList(listener.ListenerSchema, filterListeners(dump, filters.listener)), "list"],
    route: () => [asList(route.RouteConfigurationSchema, filterRoutes(dump, filters.route)), "list"],
    endpoint: () => [asList(endpoint.ClusterLoadAssignmentSchema, filterEndpoints(dump, filters.endpoint)), "list"],
    secret: () => [protoJson(admin.SecretsConfigDumpSchema, section("SecretsConfigDump")), "section"],
    bootstrap: () => [protoJson(admin.BootstrapConfigDumpSchema, bootstrapOf(dump)), "section"],
    ecds: () => [protoJson(admin.EcdsConfigDumpSchema, { ecdsFilters }), "section"],
    all: () => [protoJson(admin.ConfigDumpSchema, { configs: dump.configs }), "section"],
  };
  const [value, shape] = outputs[kind]();
  const json = shape === "list" ? goMarshalIndent(value) : goJson(value);
  return `${format === "yaml" ? goYaml(JSON.parse(json) as JsonValue) : json}\n`;
}
