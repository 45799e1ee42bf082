// `sluice x convert -f PATH [-f PATH ...] [--status] [-o yaml|json]`: the Istio config Gateway API
// resources become (Gateways, then VirtualServices, then DestinationRules), or with --status the status
// each Gateway API object would get, in the form of Istio's conversion goldens.
// Flags and help only: the conversion loads when the command runs.
import { existsSync } from "node:fs";
import type { CommandModule } from "yargs";
import type { ConfigObject } from "../config/index.ts";
import { STDIN_PATH } from "../config/index.ts";
import { EXIT_INVALID, EXIT_OK } from "./exit-codes.ts";
import { filenameOption } from "./filename-option.ts";

const OUTPUT_FORMATS = ["yaml", "json"] as const;
type OutputFormat = (typeof OUTPUT_FORMATS)[number];

interface ConvertArgs {
  filename: string[];
  status: boolean;
  output: OutputFormat;
  domain: string;
  "alpha-gateway-api": boolean;
}

/** Documents as Istio's goldens print them: YAML, each followed by a "---" line; or a JSON array. */
export async function formatDocuments(docs: readonly ConfigObject[], output: OutputFormat): Promise<string> {
  if (output === "json") return `${JSON.stringify(docs, null, 2)}\n`;
  const { stringify } = await import("yaml");
  return docs.map((doc) => `${stringify(doc, { sortMapEntries: true, lineWidth: 0, indentSeq: false })}---\n`).join("");
}

export const convertCommand: CommandModule<object, ConvertArgs> = {
  command: "convert",
  describe: "Print the Istio config (or statuses) Gateway API resources in files become",
  builder: (yargs) =>
    yargs
      .option("filename", filenameOption("convert"))
      .option("status", {
        type: "boolean",
        default: false,
        describe: "Print the status each Gateway API object would get instead of the generated config",
      })
      .option("output", {
        alias: "o",
        choices: OUTPUT_FORMATS,
        default: "yaml" as OutputFormat,
        describe: "Output format",
      })
      .option("domain", { type: "string", default: "cluster.local", describe: "Cluster DNS domain suffix" })
      .option("alpha-gateway-api", {
        type: "boolean",
        default: false,
        describe:
          "Also convert the experimental XBackend and XBackendTrafficPolicy kinds (PILOT_ENABLE_ALPHA_GATEWAY_API)",
      })
      .check((argv) => {
        const missing = argv.filename.filter((path) => path !== STDIN_PATH && !existsSync(path));
        if (missing.length > 0) throw new Error(`no such file or directory: ${missing.join(", ")}`);
        return true;
      })
      .demandCommand(0, 0)
      .example("$0 x convert -f gateway.yaml -f routes/", "Print the Istio Gateways and VirtualServices")
      .example("$0 x convert -f gateway.yaml --status", "Print the statuses Istio would write")
      .epilogue(
        [
          "Reads Gateway API resources and any Kubernetes objects they reference (Services, Secrets, ConfigMaps,",
          "Namespaces, ReferenceGrants). Services, EndpointSlices, Pods and ServiceEntries among them make the service",
          "registry gateway addresses are resolved against, as in a cluster.",
          "Output: Istio Gateways, then VirtualServices, then DestinationRules, each",
          "document followed by a '---' line. With --status: one document per object whose status would change.",
          "Exit status: 0 converted, 1 some document could not be read, 2 usage error.",
        ].join("\n"),
      ),
  handler: async (argv) => {
    const [{ readConfigPaths }, { convertObjects }] = await Promise.all([
      import("../config/decode.ts"),
      import("./convert-state.ts"),
    ]);
    const decoded = readConfigPaths(argv.filename);
    for (const doc of decoded) {
      if (doc.error) process.stderr.write(`Error: ${doc.position.file}:${doc.position.line}: ${doc.error}\n`);
    }
    const objects = decoded.flatMap((d) => (d.object ? [d.object] : []));
    const { result, problems } = convertObjects(objects, {
      domainSuffix: argv.domain,
      alphaGatewayApi: argv["alpha-gateway-api"],
    });
    for (const problem of problems) process.stderr.write(`Warning: ${problem}\n`);
    process.stdout.write(await formatDocuments(argv.status ? result.statuses : result.config, argv.output));
    process.exitCode = decoded.some((d) => d.error) ? EXIT_INVALID : EXIT_OK;
  },
};
