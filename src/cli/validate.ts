// `sluice validate -f PATH`: offline validation of config files with the same checks as the
// validation webhook (istioctl validate). Every document is checked, even after a broken one.
// Flags and help only: the validators load when the command runs, so help and completion stay quick.
import { existsSync } from "node:fs";
import type { CommandModule } from "yargs";
import { STDIN_PATH } from "../config/decode-paths.ts";
import { EXIT_INVALID, EXIT_OK } from "./exit-codes.ts";
import { filenameOption } from "./filename-option.ts";
import { DEFAULT_NAMESPACE, ISTIO_SYSTEM_NAMESPACE } from "./validate-namespaces.ts";

const OUTPUT_FORMATS = ["text", "json"] as const;
type OutputFormat = (typeof OUTPUT_FORMATS)[number];

interface ValidateArgs {
  filename: string[];
  output: OutputFormat;
}

export const validateCommand: CommandModule<object, ValidateArgs> = {
  command: "validate",
  aliases: ["v"],
  describe: "Validate config files offline, with the checks of the validation webhook",
  builder: (yargs) =>
    yargs
      .option("filename", filenameOption("validate"))
      .option("output", {
        alias: "o",
        choices: OUTPUT_FORMATS,
        default: "text" as OutputFormat,
        describe: "Output format",
      })
      .check((argv) => {
        const missing = argv.filename.filter((path) => path !== STDIN_PATH && !existsSync(path));
        if (missing.length > 0) throw new Error(`no such file or directory: ${missing.join(", ")}`);
        return true;
      })
      .demandCommand(0, 0)
      .example("$0 validate -f bookinfo-gateway.yaml", "Validate one file")
      .example("$0 validate -f manifests/ -o json", "Validate a directory and print a JSON report")
      .epilogue(
        [
          "Exit status: 0 every document is valid, 1 some document is invalid (a document that cannot be read counts),",
          "2 usage error.",
          "",
          "Text output: one line per invalid document and per document with warnings,",
          "  Error: <Kind> <namespace>/<name> (<file>:<line>): <field path>: <message>; <field path>: <message>",
          "  Warning: <Kind> <namespace>/<name> (<file>:<line>): ...",
          "  Error: <file>:<line>: <message>            (a document that cannot be decoded)",
          'then "<path>" is valid for each path, or a count of invalid documents.',
          "",
          "JSON output (-o json): an array with one object per document:",
          "  {file, index, line, apiVersion, kind, namespace, name, valid, errors, warnings}",
          '  errors and warnings are strings "<field path>: <message>" (just the message when the path is empty);',
          "  apiVersion, kind, namespace and name are null when the document could not be decoded.",
          "",
          `Objects without metadata.namespace are validated in namespace "${DEFAULT_NAMESPACE}". As istioctl, Service`,
          "ports must name their protocol (name prefix or appProtocol), and Deployments without the canonical service",
          `labels get a warning (not in ${ISTIO_SYSTEM_NAMESPACE}), with istioctl's messages. Other kinds outside the`,
          "Istio and Gateway API groups that Sluice does not know are not validated, and nothing is said about them.",
        ].join("\n"),
      ),
  handler: async (argv) => {
    const [{ readConfigPaths }, { validateDocument, formatJson, formatText }] = await Promise.all([
      import("../config/decode.ts"),
      import("./validate-report.ts"),
    ]);
    const reports = readConfigPaths(argv.filename).map(validateDocument);
    process.stdout.write(argv.output === "json" ? formatJson(reports) : formatText(reports, argv.filename));
    process.exitCode = reports.every((r) => r.valid) ? EXIT_OK : EXIT_INVALID;
  },
};
