// `sluice x describe pod|service <name> [-f FILES] [-n ns]` (istioctl's x describe): how the mesh config
// of a live cluster or of config files applies to one pod or service: its services and ports, the
// DestinationRule and VirtualService routes that reach it, and the PeerAuthentication and
// AuthorizationPolicies in force. Flags and help only here: describe-report.ts loads the state when
// the command runs.
import { existsSync } from "node:fs";
import type { Argv, CommandModule } from "yargs";
import { STDIN_PATH } from "../config/index.ts";
import type { DescribeResult, DescribeTarget } from "./describe-report.ts";
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";
import { filenameOption } from "./filename-option.ts";
import { groupCommand } from "./group-command.ts";
import { kubeconfigAvailable } from "./kubeconfig.ts";
import { loadProxyMesh } from "./translate.ts";

interface DescribeArgs {
  name: string;
  filename: string[];
  // Global flags (src/bin/sluice.ts).
  namespace?: string;
  istioNamespace?: string;
  kubeconfig?: string;
  context?: string;
  meshConfig?: string;
  domain: string;
}

function describeOptions(yargs: Argv, target: DescribeTarget) {
  return yargs
    .positional("name", { type: "string", demandOption: true, describe: `The ${target}'s name` })
    .option("filename", filenameOption(`describe the ${target} from`, false))
    .option("meshConfig", {
      type: "string",
      requiresArg: true,
      describe: "MeshConfig YAML file (default: the cluster's, else Istio's)",
    })
    .option("domain", { type: "string", default: "cluster.local", describe: "Cluster DNS domain suffix" })
    .check((argv) => {
      const missing = argv.filename.filter((path) => path !== STDIN_PATH && !existsSync(path));
      if (missing.length > 0) throw new Error(`no such file or directory: ${missing.join(", ")}`);
      return true;
    });
}

function describeSubcommand(
  target: DescribeTarget,
  example: [command: string, description: string],
): CommandModule<object, DescribeArgs> {
  return {
    command: `${target} <name>`,
    aliases: target === "pod" ? ["po"] : ["svc"],
    describe: `Describe the mesh config that applies to a ${target}`,
    builder: (yargs) =>
      describeOptions(yargs, target)
        .example(...example)
        .epilogue(
          [
            "Without -f, or with --kubeconfig or --context, reads Pods, Services, EndpointSlices and Istio config",
            "from the cluster (and its mesh config from ConfigMap istio in the Istio namespace); objects in the",
            "files given with -f replace the cluster's. With -f alone, reads only the files. The namespace is -n, else",
            "(from a cluster) the kubeconfig context's, else default.",
            `Exit status: ${EXIT_OK} described, ${EXIT_INVALID} not found or invalid input, ${EXIT_USAGE} usage error.`,
          ].join("\n"),
        ) as never,
    handler: async (argv) => {
      const { describeFromCluster, describeFromFiles } = await import("./describe-report.ts");
      const options = { domainSuffix: argv.domain, istioNamespace: argv.istioNamespace ?? "istio-system" };
      const fromCluster = argv.filename.length === 0 || argv.kubeconfig !== undefined || argv.context !== undefined;
      let result: DescribeResult;
      if (fromCluster) {
        if (!kubeconfigAvailable(argv.kubeconfig)) {
          process.stderr.write(
            "Error: no kubeconfig to reach a cluster: name one with --kubeconfig, or files with -f\n",
          );
          process.exitCode = EXIT_USAGE;
          return;
        }
        const mesh = argv.meshConfig === undefined ? undefined : await loadProxyMesh(argv.meshConfig);
        if (argv.meshConfig !== undefined && !mesh) return;
        const { clusterAccess } = await import("./kube-access.ts");
        const kube = clusterAccess(argv);
        // As istioctl: -n, else the kubeconfig context's namespace.
        const namespace = kube.namespaceOrDefault(argv.namespace);
        result = await describeFromCluster(kube.client, argv.filename, target, argv.name, namespace, {
          ...options,
          mesh,
        });
      } else {
        const mesh = await loadProxyMesh(argv.meshConfig);
        if (!mesh) return;
        const namespace = argv.namespace ?? "default";
        result = describeFromFiles(argv.filename, target, argv.name, namespace, { ...options, mesh });
      }
      if (result.problems) {
        for (const problem of result.problems) process.stderr.write(`Error: ${problem}\n`);
        process.exitCode = EXIT_INVALID;
        return;
      }
      for (const warning of result.warnings) process.stderr.write(`Warning: ${warning}\n`);
      process.stdout.write(result.text);
      process.exitCode = EXIT_OK;
    },
  };
}

export const describeCommand = groupCommand({
  command: "describe",
  aliases: ["des"],
  describe: "Describe how the mesh config applies to a pod or service",
  builder: (yargs) =>
    yargs
      .command(
        describeSubcommand("pod", [
          "$0 x describe pod productpage-v1 -n bookinfo -f examples/bookinfo",
          "Describe a pod of the bookinfo files",
        ]),
      )
      .command(
        describeSubcommand("service", [
          "$0 x describe service reviews -n bookinfo",
          "Describe a service of the current kubeconfig context's cluster",
        ]),
      ),
});
