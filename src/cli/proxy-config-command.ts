// `sluice proxy-config <type> <pod|proxyID>` (istioctl's proxy-config): summaries (or JSON/YAML) of
// a proxy's config dump. Without other flags the argument is a pod (`name[.namespace]`) of the
// kubeconfig's cluster: its Envoy's admin /config_dump through a port-forward to 15000, or for a pod
// without Envoy (proxyless gRPC) the control plane's `config_dump` of `<pod>.<namespace>`. Else the
// dump comes from the control plane over xDS (--xds-address; the argument is a proxy ID), from an
// Envoy admin (--proxy-admin-address), from the control plane's HTTP /debug/config_dump
// (--monitoring-address), or from a file (--file). Flags and help only: proxy-config.ts loads the dump
// and writes the output when the command runs.
import type { Argv, CommandModule } from "yargs";
import { reportingFailures } from "./command-error.ts";
import { withControlPlaneOptions } from "./control-plane-options.ts";
import { EXIT_OK } from "./exit-codes.ts";
import { groupCommand } from "./group-command.ts";
import { type Kind, OUTPUT_FORMATS, type ProxyConfigOutputFormat, type ProxyDumpArgs } from "./proxy-config-args.ts";

interface ProxyConfigArgs extends ProxyDumpArgs {
  output: ProxyConfigOutputFormat;
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
        const { loadDump, proxyConfigOutput } = await import("./proxy-config.ts");
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
      const { proxyLogLevels } = await import("./proxy-config.ts");
      process.stdout.write(await proxyLogLevels(argv, argv.level));
      process.exitCode = EXIT_OK;
    }),
};

export const proxyConfigCommand = groupCommand({
  command: "proxy-config",
  aliases: ["pc"],
  describe: "A proxy's configuration: clusters, listeners, routes, endpoints, secrets, bootstrap",
  builder: (yargs) => KINDS.reduce((y, entry) => y.command(kindCommand(entry)), yargs).command(logCommand),
});
