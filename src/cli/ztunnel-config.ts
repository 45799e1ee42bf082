// `sluice ztunnel-config` (istioctl's ztunnel-config, alias zc): the workloads, services, policies,
// certificates and connections of a ztunnel's config dump, as tables or as JSON/YAML, and its logging
// levels (log). The dump comes
// from a file (--file) or a ztunnel pod's admin port (ztunnel-config-run.ts). Flags and help only;
// the dump is read and written when a command runs.
import type { Argv, CommandModule } from "yargs";
import { exitOneOnFailure } from "./command-error.ts";
import { groupCommand } from "./group-command.ts";
import type { ZtunnelDump } from "./ztunnel-config-dump.ts";
import type { ZtunnelLogArgs, ZtunnelSourceArgs } from "./ztunnel-config-run.ts";
import type { ZtunnelOutputFormat } from "./ztunnel-config-writer.ts";

type Writer = typeof import("./ztunnel-config-writer.ts");

interface CommonArgs extends ZtunnelSourceArgs {
  output: string;
}

interface ZtunnelArgs extends CommonArgs {
  address?: string;
  workloadNamespace?: string;
  workloadNode?: string;
  serviceNamespace?: string;
  policyNamespace?: string;
  withHeaders: boolean;
  direction?: string;
  raw: boolean;
}

/** What a command prints of a dump: `summary` for -o short, `dump` for json and yaml. */
interface Part {
  summary: (
    writer: Writer,
    dump: ZtunnelDump,
    argv: ZtunnelArgs,
    target?: { name: string; namespace: string },
  ) => string;
  dump: (
    writer: Writer,
    dump: ZtunnelDump,
    argv: ZtunnelArgs,
    format: ZtunnelOutputFormat,
    target?: { name: string; namespace: string },
  ) => string;
}

function commonOptions<T>(yargs: Argv<T>) {
  return yargs
    .positional("pod", {
      type: "string",
      describe: "A ztunnel pod (name[.namespace] or daemonset/name), or a workload's pod (its node's ztunnel)",
    })
    .option("proxy-admin-port", { type: "number", default: 15000, describe: "ztunnel's admin port" })
    .option("output", { alias: "o", type: "string", default: "short", describe: "Output format: short, json or yaml" })
    .option("node", { type: "string", describe: "Read the ztunnel of this node" })
    .option("file", { alias: "f", type: "string", describe: "Read a ztunnel config dump (JSON) from this file" });
}

/** istioctl's checks of the dump's source (errors of the command, exit status 1, not usage errors). */
function checkSource(argv: CommonArgs): void {
  const sources = [argv.file, argv.pod, argv.node].filter((s) => s !== undefined && s !== "").length;
  if (sources > 1) throw new Error("at most one of --file, --node, or pod name must be passed");
  const port = argv.proxyAdminPort;
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535))
    throw new Error(`port number ${port} must be in the range 1..65535`);
}

function partCommand(
  name: string,
  aliases: string[],
  describe: string,
  singlePod: boolean,
  part: Part,
  options: (yargs: Argv<CommonArgs>) => Argv<CommonArgs> = (y) => y,
): CommandModule<object, ZtunnelArgs> {
  return {
    command: `${name} [pod]`,
    aliases,
    describe,
    builder: (yargs) =>
      options(commonOptions(yargs) as unknown as Argv<CommonArgs>)
        .example(`$0 ztunnel-config ${name}`, "From a ztunnel of the cluster")
        .example(`$0 ztunnel-config ${name} --file ztunnel-config.json -o json`, "From a saved /config_dump") as never,
    handler: (argv) =>
      exitOneOnFailure(async () => {
        checkSource(argv);
        const [{ loadZtunnelDump }, writer] = await Promise.all([
          import("./ztunnel-config-run.ts"),
          import("./ztunnel-config-writer.ts"),
        ]);
        const { dump, target } = await loadZtunnelDump(argv, singlePod);
        const format = argv.output;
        if (format === "short") process.stdout.write(part.summary(writer, dump, argv, target));
        else if (format === "json" || format === "yaml")
          process.stdout.write(part.dump(writer, dump, argv, format, target));
        else throw new Error(`output format ${JSON.stringify(format)} not supported`);
      }),
  };
}

const workloadFilter = (argv: ZtunnelArgs, target?: { name: string; namespace: string }) => ({
  namespace: target?.namespace ?? argv.workloadNamespace,
  address: argv.address,
  node: argv.workloadNode,
  name: target?.name,
});

const connectionsFilter = (argv: ZtunnelArgs, target?: { name: string; namespace: string }) => ({
  namespace: target?.namespace ?? argv.workloadNamespace,
  direction: argv.direction,
  raw: argv.raw,
  workload: target?.name,
});

const workloadNamespaceOption = (yargs: Argv<CommonArgs>) =>
  yargs.option("workload-namespace", { type: "string", describe: "Only workloads of this namespace" });

const COMMANDS = [
  partCommand(
    "workload",
    ["w", "workloads"],
    "The workloads ztunnel knows (address, node, waypoint, protocol)",
    false,
    {
      summary: (w, dump, argv, target) => w.workloadSummary(dump, workloadFilter(argv, target)),
      dump: (w, dump, argv, format, target) => w.workloadDump(dump, workloadFilter(argv, target), format),
    },
    (yargs) =>
      workloadNamespaceOption(yargs)
        .option("address", { type: "string", describe: "Only the workload with this address" })
        .option("workload-node", { type: "string", describe: "Only workloads on this node" }),
  ),
  partCommand(
    "service",
    ["services", "s", "svc"],
    "The services ztunnel knows (VIPs, waypoint, healthy endpoints)",
    false,
    {
      summary: (w, dump, argv) => w.serviceSummary(dump, argv.serviceNamespace),
      dump: (w, dump, argv, format) => w.serviceDump(dump, argv.serviceNamespace, format),
    },
    (yargs) => yargs.option("service-namespace", { type: "string", describe: "Only services of this namespace" }),
  ),
  partCommand(
    "policy",
    ["policies", "p", "pol"],
    "The authorization policies ztunnel enforces",
    false,
    {
      summary: (w, dump, argv) => w.policySummary(dump, argv.policyNamespace),
      dump: (w, dump, argv, format) => w.policyDump(dump, argv.policyNamespace, format),
    },
    (yargs) => yargs.option("policy-namespace", { type: "string", describe: "Only policies of this namespace" }),
  ),
  partCommand("certificate", ["certificates", "certs", "cert"], "The certificates of a ztunnel's workloads", true, {
    summary: (w, dump) => w.certificateSummary(dump),
    dump: (w, dump, _argv, format) => w.certificateDump(dump, format),
  }),
  partCommand(
    "connections",
    ["cons"],
    "The connections a ztunnel carries for its workloads",
    true,
    {
      summary: (w, dump, argv, target) => w.connectionsSummary(dump, connectionsFilter(argv, target)),
      dump: (w, dump, argv, format, target) => w.connectionsDump(dump, connectionsFilter(argv, target), format),
    },
    (yargs) =>
      workloadNamespaceOption(yargs)
        .option("direction", { type: "string", describe: "Only connections of this direction (inbound or outbound)" })
        .option("raw", { type: "boolean", default: false, describe: "Addresses, not the names of who has them" }),
  ),
  partCommand(
    "all",
    [],
    "Every part of a ztunnel's config dump",
    false,
    {
      summary: (w, dump, argv) => w.fullSummary(dump, argv.withHeaders),
      dump: (w, dump, _argv, format) => w.fullDump(dump, format),
    },
    (yargs) => yargs.option("with-headers", { type: "boolean", default: false, describe: "A title above each table" }),
  ),
];

/** `log [pod]`: reads, sets (--level) or resets (--reset) ztunnel's logging levels. */
const logCommand: CommandModule<object, ZtunnelLogArgs & { output: string }> = {
  command: "log [pod]",
  aliases: ["o"],
  describe: "A ztunnel's logging levels (read, set with --level, or --reset), of every ztunnel without a pod",
  builder: (yargs) =>
    (commonOptions(yargs) as unknown as Argv<CommonArgs>)
      .option("level", {
        type: "string",
        describe:
          "Levels to set: <level> for every logger, or <logger>:<level>,...; levels: trace, debug, info, warning, error, critical, off",
      })
      .option("reset", {
        alias: "r",
        type: "boolean",
        default: false,
        describe: "Reset the levels to the default (info)",
      })
      .example("$0 ztunnel-config log", "Every ztunnel's logging levels")
      .example("$0 ztunnel-config log ztunnel-bcd2w --level off", "Silence one ztunnel")
      .example("$0 ztunnel-config log --level access:debug,info", "One logger at debug, the others at info") as never,
  handler: (argv) =>
    exitOneOnFailure(async () => {
      checkSource(argv);
      if (argv.reset && argv.level) throw new Error("--level cannot be combined with --reset");
      if (argv.output !== "short") throw new Error("--output is not applicable for this command");
      const { checkZtunnelLogLevels, ztunnelLogLevels } = await import("./ztunnel-config-run.ts");
      if (argv.level) checkZtunnelLogLevels(argv.level);
      const { text, failure } = await ztunnelLogLevels(argv);
      process.stdout.write(text);
      if (failure) throw failure;
    }),
};

export const ztunnelConfigCommand = groupCommand({
  command: "ztunnel-config",
  aliases: ["zc"],
  describe: "A ztunnel's configuration: workloads, services, policies, certificates, connections",
  builder: (yargs) => COMMANDS.reduce((y, command) => y.command(command), yargs).command(logCommand),
});
