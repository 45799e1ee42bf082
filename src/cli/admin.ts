// `sluice admin log [<pod>]` (istioctl's admin log): the control plane's logging scopes through its
// ControlZ (port 9876, reached by a port-forward to the first control plane pod of -r's revision, or
// --ctrlz-address without a cluster): listed (-o short|json|yaml), set (--level,
// --stack-trace-level <scope>:<level>,...) or reset (--reset, --log-reset, --stack-trace-reset).
import type { CommandModule } from "yargs";
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";
import { groupCommand } from "./group-command.ts";

interface LogArgs {
  pod?: string;
  level?: string;
  "stack-trace-level"?: string;
  reset: boolean;
  "log-reset": boolean;
  "stack-trace-reset": boolean;
  output: string;
  ctrlz_port: number;
  "ctrlz-address"?: string;
  revision?: string;
  selector: string;
  istioNamespace?: string;
  kubeconfig?: string;
  context?: string;
}

interface ScopeInfo {
  name: string;
  description?: string;
  output_level?: string;
  stack_trace_level?: string;
}

/** istioctl's check of a `<scope>:<level>` pair. */
const PAIR = /^[\w\- ]+:(none|error|warn|info|debug)/;

/** `scope:level,...` as the scope changes to send; an entry that is not a pair is an error naming it. */
export function scopeLevelPairs(text: string, field: "output_level" | "stack_trace_level"): ScopeInfo[] {
  return text.split(",").map((pair) => {
    if (!PAIR.test(pair)) throw new Error(`pattern ${pair} did not match`);
    const [name, level] = pair.split(":");
    return { name, [field]: level };
  });
}

/** ControlZ's scope API at `base` (http://host:port/scopej). */
class ControlZClient {
  constructor(private readonly base: string) {}

  async scopes(): Promise<ScopeInfo[]> {
    const res = await fetch(this.base, { signal: AbortSignal.timeout(30_000) });
    if (res.status !== 200) throw new Error(`request not successful ${res.status} ${res.statusText}`);
    return (await res.json()) as ScopeInfo[];
  }

  /** Sends every change; the first refused one is the error. */
  async put(changes: readonly ScopeInfo[]): Promise<void> {
    const results = await Promise.all(
      changes.map(async (change) => {
        const res = await fetch(`${this.base}/${change.name}`, {
          method: "PUT",
          body: JSON.stringify(change),
          signal: AbortSignal.timeout(30_000),
        });
        await res.arrayBuffer();
        return res.status === 202
          ? undefined
          : `failed updating Scope ${change.name}: cannot update resource ${change.name}, got status ${res.status} ${res.statusText}`;
      }),
    );
    const failed = results.find((result) => result !== undefined);
    if (failed) throw new Error(failed);
  }
}

/** What the flags ask for, done against `client`; the listing's text, else "". */
async function runLog(argv: LogArgs, client: ControlZClient, format: typeof import("./proxy-config-format.ts")) {
  const logReset = argv.reset || argv["log-reset"];
  const stackReset = argv.reset || argv["stack-trace-reset"];
  if (logReset || stackReset) {
    const all = await client.scopes().catch((err: Error) => {
      throw new Error(`could not get all scopes: ${err.message}`);
    });
    await client.put(
      all.map((scope) => ({
        name: scope.name,
        ...(logReset ? { output_level: "info" } : {}),
        ...(stackReset ? { stack_trace_level: "none" } : {}),
      })),
    );
    return "";
  }
  if (argv.level || argv["stack-trace-level"]) {
    await client.put([
      ...(argv.level ? scopeLevelPairs(argv.level, "output_level") : []),
      ...(argv["stack-trace-level"] ? scopeLevelPairs(argv["stack-trace-level"], "stack_trace_level") : []),
    ]);
    return "";
  }
  const scopes = await client.scopes().catch((err: Error) => {
    throw new Error(`could not get scopes information: ${err.message}`);
  });
  scopes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const rows = scopes.map((s) => ({
    scope_name: s.name,
    log_level: s.output_level ?? "",
    stack_trace_level: s.stack_trace_level ?? "",
    description: s.description ?? "",
  }));
  if (argv.output === "short") {
    const { alignTabs } = await import("./proxy-config-tabwriter.ts");
    const lines = [
      "ACTIVE SCOPE\tDESCRIPTION\tLOG LEVEL\tSTACK TRACE LEVEL\n",
      ...rows.map((r) => `${r.scope_name}\t${r.description}\t${r.log_level}\t${r.stack_trace_level}\n`),
    ];
    return alignTabs(lines.join(""), { minWidth: 0, padding: 3 });
  }
  // Go's json.MarshalIndent (two spaces, <>& escaped), or its YAML through sigs.k8s.io/yaml.
  if (argv.output === "json") {
    const text = JSON.stringify(rows.length ? rows : null, null, 2).replace(
      /[<>&]/g,
      (c) => `\\u00${c.charCodeAt(0).toString(16)}`,
    );
    return `${text}\n`;
  }
  return format.goYaml(rows.length ? rows : null);
}

const logCommand: CommandModule<object, LogArgs> = {
  command: "log [pod]",
  aliases: ["l"],
  describe: "Retrieve or update the logging levels of the control plane's scopes",
  builder: (yargs) =>
    yargs
      .positional("pod", { type: "string", describe: "The control plane pod (default: the first of -r's revision)" })
      .option("level", {
        type: "string",
        requiresArg: true,
        describe: "Output levels to set, <scope>:<level>[,...]; levels none, error, warn, info, debug",
      })
      .option("stack-trace-level", {
        type: "string",
        requiresArg: true,
        describe: "Stack trace levels to set, <scope>:<level>[,...]; levels none, error, warn, info, debug",
      })
      .option("reset", { type: "boolean", default: false, describe: "Reset all levels to default value. (info)" })
      .option("log-reset", { type: "boolean", default: false, describe: "Reset log levels to default value. (info)" })
      .option("stack-trace-reset", {
        type: "boolean",
        default: false,
        describe: "Reset stack trace levels to default value. (none)",
      })
      .option("output", {
        alias: "o",
        type: "string",
        default: "short",
        choices: ["short", "json", "yaml"],
        describe: "Output format",
      })
      .option("ctrlz_port", { type: "number", default: 9876, describe: "ControlZ port" })
      .option("ctrlz-address", {
        type: "string",
        requiresArg: true,
        describe: "ControlZ's host:port, to reach a control plane without a cluster",
      })
      .option("revision", { alias: "r", type: "string", describe: "Control plane revision (default: default)" })
      .option("selector", { alias: "l", type: "string", default: "app=istiod", describe: "label selector" })
      .check((argv) => {
        if (!Number.isInteger(argv.ctrlz_port) || argv.ctrlz_port < 1 || argv.ctrlz_port > 65535)
          throw new Error(`port ${argv.ctrlz_port} is not in the range 1-65535`);
        return true;
      })
      .example("$0 admin log", "The control plane's scopes and their levels")
      .example("$0 admin log --level ads:debug,kube:debug", "Set two scopes' output levels")
      .example("$0 admin log --reset", "Every scope back to info, without stack traces")
      .epilogue(
        `Exit status: ${EXIT_OK} done, ${EXIT_INVALID} ControlZ could not be reached or refused, ${EXIT_USAGE} usage error.`,
      ) as never,
  handler: async (argv) => {
    const format = await import("./proxy-config-format.ts");
    try {
      let text: string;
      const address = argv["ctrlz-address"];
      if (address) text = await runLog(argv, new ControlZClient(`http://${address}/scopej`), format);
      else {
        const { kubeconfigAvailable } = await import("./kubeconfig.ts");
        if (!kubeconfigAvailable(argv.kubeconfig)) {
          process.stderr.write(
            "Error: no kubeconfig to reach a cluster: name one with --kubeconfig, or give --ctrlz-address\n",
          );
          process.exitCode = EXIT_USAGE;
          return;
        }
        const { clusterAccess } = await import("./kube-access.ts");
        const kube = clusterAccess(argv);
        const namespace = argv.istioNamespace ?? "istio-system";
        let pod = argv.pod;
        if (!pod) {
          const selector = `${argv.selector},istio.io/rev=${argv.revision || "default"}`;
          const pods = await kube.podsForSelector(namespace, selector).catch((err: Error) => {
            throw new Error(`not able to locate pod with selector ${selector}: ${err.message}`);
          });
          if (pods.length === 0) throw new Error("no pods found");
          if (pods.length > 1)
            process.stderr.write(
              `more than 1 pods fits selector: ${selector}; will use pod: ${pods[0].metadata.name}\n`,
            );
          pod = pods[0].metadata.name;
        }
        text = await kube.withPortForward({ name: pod, namespace }, argv.ctrlz_port, (forwarded) =>
          runLog(argv, new ControlZClient(`http://${forwarded}/scopej`), format),
        );
      }
      process.stdout.write(text);
      process.exitCode = EXIT_OK;
    } catch (err) {
      process.stderr.write(`Error: ${(err as Error).message}\n`);
      process.exitCode = EXIT_INVALID;
    }
  },
};

export const adminCommand = groupCommand({
  command: "admin",
  aliases: ["istiod"],
  describe: "Manage the control plane (istiod) configuration",
  builder: (yargs) => yargs.command(logCommand),
});
