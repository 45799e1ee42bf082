// `sluice install [-f values.yaml]... [--set path=value]... [--dry-run] [--skip-crds]`: renders the
// control plane (the CRDs, then istiod's objects under Istio's names) from manifests/values.yaml with
// the given files and --set values merged over it, and applies it to the cluster by server-side apply;
// --dry-run prints the manifests instead (`kubectl apply --server-side -f -` applies them the same way).
import { existsSync } from "node:fs";
import type { CommandModule } from "yargs";
import { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";

interface InstallArgs {
  filename: string[];
  set: string[];
  dryRun: boolean;
  skipCrds: boolean;
  kubeconfig?: string;
  context?: string;
}

export const installCommand: CommandModule<object, InstallArgs> = {
  command: "install",
  describe: "Install the Sluice control plane into a cluster (or print its manifests)",
  builder: (yargs) =>
    yargs
      .option("filename", {
        alias: "f",
        type: "string",
        array: true,
        default: [] as string[],
        requiresArg: true,
        describe: "Values file (Istio's istiod Helm values, or an IstioOperator); repeatable, later wins",
      })
      .option("set", {
        alias: "s",
        type: "string",
        array: true,
        default: [] as string[],
        requiresArg: true,
        describe: "One value, path=value (e.g. revision=canary, pilot.replicaCount=3); repeatable",
      })
      .option("dryRun", {
        alias: "dry-run",
        type: "boolean",
        default: false,
        describe: "Print the manifests instead of applying them",
      })
      .option("skipCrds", {
        alias: "skip-crds",
        type: "boolean",
        default: false,
        describe: "Leave out Istio's and the Gateway API's CustomResourceDefinitions",
      })
      .check((argv) => {
        const missing = argv.filename.filter((path) => !existsSync(path));
        if (missing.length > 0) throw new Error(`no such file or directory: ${missing.join(", ")}`);
        return true;
      })
      .example("$0 install --dry-run > sluice.yaml", "The default install's manifests")
      .example("$0 install -f values.yaml", "Install with values merged over the defaults")
      .example("$0 install --set revision=canary", "Install a second control plane, revision canary")
      .epilogue(
        [
          "The defaults, and every value read, are in the package's manifests/values.yaml; the names and",
          "labels of the objects are those of Istio's istiod chart. Objects are applied in order by",
          "server-side apply (field manager sluice-install), so running it again updates the install.",
          `Exit status: ${EXIT_OK} installed (or printed), ${EXIT_INVALID} bad values or a refused object, ${EXIT_USAGE} usage error.`,
        ].join("\n"),
      ) as never,
  handler: async (argv) => {
    const install = await import("../install/index.ts");
    let objects: ReturnType<typeof install.installObjects>;
    try {
      objects = install.installObjects(new install.Values(install.loadValues(argv.filename, argv.set)), !argv.skipCrds);
    } catch (err) {
      process.stderr.write(`Error: ${(err as Error).message}\n`);
      process.exitCode = EXIT_INVALID;
      return;
    }
    if (argv.dryRun) {
      process.stdout.write(install.manifestText(objects));
      process.exitCode = EXIT_OK;
      return;
    }
    const [{ kubeconfigAvailable }, { clusterAccess }] = await Promise.all([
      import("./kubeconfig.ts"),
      import("./kube-access.ts"),
    ]);
    if (!kubeconfigAvailable(argv.kubeconfig)) {
      process.stderr.write("Error: no kubeconfig to reach a cluster: name one with --kubeconfig, or use --dry-run\n");
      process.exitCode = EXIT_USAGE;
      return;
    }
    try {
      await install.applyObjects(clusterAccess(argv).client, objects, (object) =>
        process.stdout.write(`${install.objectRef(object)} applied\n`),
      );
    } catch (err) {
      process.stderr.write(`Error: ${(err as Error).message}\n`);
      process.exitCode = EXIT_INVALID;
      return;
    }
    const deployment = objects.find((object) => object.kind === "Deployment");
    process.stdout.write(
      `✔ Sluice control plane installed: Deployment ${deployment?.metadata.namespace}/${deployment?.metadata.name}\n`,
    );
    process.exitCode = EXIT_OK;
  },
};
