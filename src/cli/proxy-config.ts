// `sluice proxy-config <type> <pod|proxyID>` (istioctl's proxy-config): summaries (or JSON/YAML) of
// a proxy's config dump. Without other flags the argument is a pod (`name[.namespace]`) of the
// kubeconfig's cluster: its Envoy's admin /config_dump through a port-forward to 15000, or for a pod
// without Envoy (proxyless gRPC) the control plane's `config_dump` of `<pod>.<namespace>`. Else the
// dump comes from the control plane over xDS (--xds-address; the argument is a proxy ID), from an
// Envoy admin (--proxy-admin-address), from the control plane's HTTP /debug/config_dump
// (--monitoring-address), or from a file (--file).
import { readFileSync } from "node:fs";
import type { DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Argv, CommandModule } from "yargs";
import { admin, cluster, endpoint, listener, route } from "../api/index.ts";
import { DEBUG_TYPE_PREFIX } from "../xds/types.ts";
import { EXIT_OK } from "./exit-codes.ts";
import { clusterAccess, hasEnvoySidecar, type KubeAccess, type Pod } from "./kube-access.ts";
import { cliLog } from "./log.ts";
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
import {
  type ControlPlaneArgs,
  debugBodies,
  reportingFailures,
  requestControlPlanes,
  usesCluster,
  withControlPlaneOptions,
} from "./xds-client.ts";

const OUTPUT_FORMATS = ["short", "json", "yaml"] as const;
/** Envoy's admin port in an Istio sidecar (istioctl's --proxy-admin-port default). */
const ENVOY_ADMIN_PORT = 15000;

/** Where a command reads a proxy's config dump from. */
export interface ProxyDumpArgs extends ControlPlaneArgs {
  proxy?: string;
  file?: string;
  "proxy-admin-address"?: string;
  "monitoring-address"?: string;
  namespace?: string;
}

interface ProxyConfigArgs extends ProxyDumpArgs {
  output: (typeof OUTPUT_FORMATS)[number];
  fqdn?: string;
  port?: number;
  subset?: string;
  direction?: string;
  address?: string;
  type?: string;
  name?: string;
  cluster?: string;
  status?: string;
  verbose: boolean;
  "with-headers": boolean;
  level?: string;
}

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

async function httpRequest(method: "GET" | "POST", url: string): Promise<string> {
  const res = await fetch(url, { method, signal: AbortSignal.timeout(30_000) });
  cliLog("http").debug({ method, url, status: res.status }, "HTTP request");
  const text = await res.text();
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status} ${text.trim()}`);
  return text;
}

export type Kind = "cluster" | "listener" | "route" | "endpoint" | "secret" | "bootstrap" | "ecds" | "all";

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
  format: (typeof OUTPUT_FORMATS)[number],
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

const KINDS: { kind: Kind; aliases: string[]; describe: string }[] = [
  { kind: "all", aliases: ["a"], describe: "Every part of the proxy's configuration" },
  { kind: "bootstrap", aliases: ["b"], describe: "The proxy's bootstrap (Istio and Envoy versions)" },
  { kind: "cluster", aliases: ["clusters", "c"], describe: "The proxy's clusters" },
  { kind: "ecds", aliases: ["ec"], describe: "The proxy's extension configs (ECDS)" },
  { kind: "endpoint", aliases: ["endpoints", "ep"], describe: "The proxy's endpoints" },
  { kind: "listener", aliases: ["listeners", "l"], describe: "The proxy's listeners" },
  { kind: "route", aliases: ["routes", "r"], describe: "The proxy's routes" },
  { kind: "secret", aliases: ["secrets", "s"], describe: "The proxy's secrets" },
];

/** The options naming a proxy and where its dump comes from. */
export function proxyDumpOptions<T>(yargs: Argv<T>) {
  return withControlPlaneOptions(yargs)
    .positional("proxy", { type: "string", describe: "The pod (name.namespace) or proxy ID" })
    .option("file", { alias: "f", type: "string", describe: "Read an Envoy config dump (JSON) from this file" })
    .option("proxy-admin-address", { type: "string", describe: "host:port of the proxy's Envoy admin (15000)" })
    .option("monitoring-address", {
      type: "string",
      describe: "host:port of the control plane's HTTP debug endpoints (15014): its config dump over HTTP, not xDS",
    });
}

function kindCommand(entry: (typeof KINDS)[number]): CommandModule<object, ProxyConfigArgs> {
  return {
    command: `${entry.kind} [proxy]`,
    aliases: entry.aliases,
    describe: entry.describe,
    builder: (yargs) =>
      proxyDumpOptions(yargs)
        .option("output", { alias: "o", choices: OUTPUT_FORMATS, default: "short" as const, describe: "Output format" })
        .option("fqdn", { type: "string", describe: "Clusters whose name contains this service FQDN" })
        .option("port", { type: "number", describe: "Clusters, listeners and endpoints on this port" })
        .option("subset", { type: "string", describe: "Clusters whose name contains this subset" })
        .option("direction", { type: "string", describe: "Clusters of this direction (inbound, outbound)" })
        .option("address", { type: "string", describe: "Listeners and endpoints with this address" })
        .option("type", { type: "string", describe: "Listeners of this type (HTTP, TCP, HTTP+TCP)" })
        .option("name", { type: "string", describe: "The route of this name" })
        .option("cluster", { type: "string", describe: "Endpoints of this cluster" })
        .option("status", { type: "string", describe: "Endpoints of this health status" })
        .option("verbose", { type: "boolean", default: true, describe: "Routes and listeners in detail" })
        .option("with-headers", { type: "boolean", default: false, describe: "Headers between the parts of `all`" })
        .example(`$0 proxy-config ${entry.kind} productpage-v1-6b746f74dc-9stvs.default`, "From the pod's Envoy")
        .example(
          `$0 proxy-config ${entry.kind} client.default --xds-address localhost:15010 --plaintext`,
          "From the control plane",
        )
        .example(`$0 proxy-config ${entry.kind} --file config_dump.json`, "From an Envoy config dump") as never,
    handler: (argv) =>
      reportingFailures(async () => {
        const filters = {
          cluster: { fqdn: argv.fqdn, port: argv.port, subset: argv.subset, direction: argv.direction },
          listener: { address: argv.address, port: argv.port, type: argv.type, verbose: argv.verbose },
          route: { name: argv.name, verbose: argv.verbose },
          endpoint: { address: argv.address, port: argv.port, cluster: argv.cluster, status: argv.status },
        };
        const dump = await loadDump(argv);
        process.stdout.write(proxyConfigOutput(entry.kind, dump, filters, argv.output, argv["with-headers"]));
        process.exitCode = EXIT_OK;
      }),
  };
}

const logCommand: CommandModule<object, ProxyConfigArgs> = {
  command: "log [proxy]",
  aliases: ["o"],
  describe: "The proxy's Envoy logging levels (read, or set with --level)",
  builder: (yargs) =>
    proxyDumpOptions(yargs)
      .option("level", { type: "string", describe: "Set levels: <level> or <logger>:<level>,..." })
      .example("$0 proxy-config log productpage-v1-6b746f74dc-9stvs.default", "The pod's Envoy logger levels")
      .example("$0 proxy-config log --proxy-admin-address localhost:15000", "Envoy's logger levels")
      .example("$0 proxy-config log --proxy-admin-address localhost:15000 --level http:debug", "Set one") as never,
  handler: (argv) =>
    reportingFailures(async () => {
      const query = (argv.level ?? "")
        .split(",")
        .filter((l) => l !== "")
        .map((l) => (l.includes(":") ? l.replace(":", "=") : `level=${l}`))
        .join("&");
      const logging = (address: string) => httpRequest("POST", `http://${address}/logging${query ? `?${query}` : ""}`);
      const admin = argv["proxy-admin-address"];
      if (admin) {
        process.stdout.write(await logging(admin));
      } else if (argv.proxy && usesCluster(argv)) {
        const { kube, pod } = await resolvePod(argv, argv.proxy);
        if (!hasEnvoySidecar(pod)) {
          throw new Error(
            `pod ${pod.metadata.name}.${pod.metadata.namespace} runs no Envoy (proxyless gRPC): no log levels`,
          );
        }
        process.stdout.write(await kube.withPortForward(pod.metadata, ENVOY_ADMIN_PORT, logging));
      } else {
        throw new Error(
          "proxy-config log needs the proxy's Envoy admin: name a pod (with a kubeconfig) or pass --proxy-admin-address",
        );
      }
      process.exitCode = EXIT_OK;
    }),
};

export const proxyConfigCommand: CommandModule = {
  command: "proxy-config",
  aliases: ["pc"],
  describe: "A proxy's configuration: clusters, listeners, routes, endpoints, secrets, bootstrap",
  builder: (yargs) =>
    KINDS.reduce((y, entry) => y.command(kindCommand(entry)), yargs)
      .command(logCommand)
      .demandCommand(1, "Name what to show: all, bootstrap, cluster, ecds, endpoint, listener, log, route, secret."),
  handler: () => {},
};
