// `sluice x precheck -f PATH` (istioctl's precheck, the part that needs no cluster): the config that
// is about to be installed or upgraded to, checked with the validation webhook's rules. Cluster
// checks (Kubernetes version, permissions, running workloads) need a cluster and are not made.
import type { CommandModule } from "yargs";
import { EXIT_INVALID, EXIT_OK } from "./exit-codes.ts";
import { filenameOption } from "./filename-option.ts";

interface PrecheckArgs {
  filename: string[];
}

export const precheckCommand: CommandModule<object, PrecheckArgs> = {
  command: "precheck",
  describe: "Check config before installing or upgrading (the checks that need no cluster)",
  builder: (yargs) =>
    yargs
      .option("filename", filenameOption("check"))
      .example("$0 x precheck -f manifests/", "Check every config file under manifests/")
      .epilogue("Exit status: 0 no issues, 1 some object is invalid, 2 usage error.") as never,
  handler: async (argv) => {
    const [{ readConfigPaths }, { validateDocument, formatText }] = await Promise.all([
      import("../config/decode.ts"),
      import("./validate-report.ts"),
    ]);
    const reports = readConfigPaths(argv.filename).map(validateDocument);
    if (reports.every((r) => r.valid && r.warnings.length === 0)) {
      process.stdout.write("✔ No issues found when checking the config. Istio is safe to install or upgrade!\n");
      process.exitCode = EXIT_OK;
      return;
    }
    // The issues as `validate` words them; its per-path success lines are not wanted here.
    const issues = formatText(reports, []).trimEnd();
    process.stdout.write(`${issues}\n`);
    process.exitCode = reports.every((r) => r.valid) ? EXIT_OK : EXIT_INVALID;
  },
};
