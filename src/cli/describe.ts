// `sluice x describe pod|service <name> -f FILES [-n ns]` (istioctl's x describe): how the mesh config
// in the files applies to one pod or service: its services and ports, the DestinationRule and
// VirtualService routes that reach it, and the PeerAuthentication and AuthorizationPolicies in force.
// Flags and help only here: describe-report.ts loads the state when the command runs.
import { existsSync } from "node:fs";
import type { Argv, CommandModule } from "yargs";
import { STDIN_PATH } from "../config/decode-paths.ts";
import { EXIT_INVALID, EXIT_OK } from "./exit-codes.ts";
import { filenameOption } from "./filename-option.ts";
import { loadProxyMesh } from "./translate.ts";

export type DescribeTarget = "pod" | "service";

interface DescribeArgs {
  name: string;
  filename: string[];
  // Global flags (src/bin/sluice.ts).
  namespace?: string;
  istioNamespace?: string;
  meshConfig?: string;
  domain: string;
}

function describeOptions(yargs: Argv, target: DescribeTarget) {
  return yargs
    .positional("name", { type: "string", demandOption: true, describe: `The ${target}'s name` })
    .option("filename", filenameOption(`describe the ${target} from`))
    .option("meshConfig", { type: "string", requiresArg: true, describe: "MeshConfig YAML file (default: Istio's)" })
    .option("domain", { type: "string", default: "cluster.local", describe: "Cluster DNS domain suffix" })
    .check((argv) => {
      const missing = argv.filename.filter((path) => path !== STDIN_PATH && !existsSync(path));
      if (missing.length > 0) throw new Error(`no such file or directory: ${missing.join(", ")}`);
      return true;
    });
}

function describeSubcommand(target: DescribeTarget, example: string): CommandModule<object, DescribeArgs> {
  return {
    command: `${target} <name>`,
    aliases: target === "pod" ? ["po"] : ["svc"],
    describe: `Describe the mesh config that applies to a ${target}`,
    builder: (yargs) =>
      describeOptions(yargs, target)
        .example(example, `Describe a ${target} of the bookinfo files`)
        .epilogue(
          "Reads Pods, Services and Istio config from the files. Exit status: 0 described, 1 not found or invalid input, 2 usage error.",
        ) as never,
    handler: async (argv) => {
      const { describeFromFiles } = await import("./describe-report.ts");
      const mesh = await loadProxyMesh(argv.meshConfig);
      if (!mesh) return;
      const result = describeFromFiles(argv.filename, target, argv.name, argv.namespace ?? "default", {
        mesh,
        domainSuffix: argv.domain,
        istioNamespace: argv.istioNamespace ?? "istio-system",
      });
      if (result.problems) {
        for (const problem of result.problems) process.stderr.write(`Error: ${problem}\n`);
        process.exitCode = EXIT_INVALID;
        return;
      }
      process.stdout.write(result.text);
      process.exitCode = EXIT_OK;
    },
  };
}

export const describeCommand: CommandModule = {
  command: "describe",
  aliases: ["des"],
  describe: "Describe how the mesh config applies to a pod or service",
  builder: (yargs) =>
    yargs
      .command(describeSubcommand("pod", "$0 x describe pod productpage-v1 -n bookinfo -f examples/bookinfo"))
      .command(describeSubcommand("service", "$0 x describe service reviews -n bookinfo -f examples/bookinfo"))
      .demandCommand(1, "Name what to describe: pod or service."),
  handler: () => {},
};
