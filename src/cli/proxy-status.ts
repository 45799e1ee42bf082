// `sluice proxy-status [proxy]` (istioctl's xDS proxy-status): every connected proxy's sync status
// from the control plane's `istio.io/debug/syncz` (--xds-address, or every istiod pod of the
// kubeconfig's cluster), as a table of subscribed types (with --verbose, each type's SYNCED /
// NOT SENT / STALE), or the responses as JSON or YAML. A proxy argument keeps the proxies whose ID
// contains it.
import { readFileSync } from "node:fs";
import type { CommandModule } from "yargs";
import { csds, unpackAny } from "../api/index.ts";
import { SYNCZ_TYPE_URL } from "../xds/generators/status.ts";
import { EXIT_OK } from "./exit-codes.ts";
import { controlPlaneDump } from "./proxy-config.ts";
import { parseConfigDump } from "./proxy-config-writer.ts";
import { compareDumps } from "./proxy-status-compare.ts";
import { controlPlaneId, STATUS_OUTPUT_FORMATS, writeStatus } from "./proxy-status-writer.ts";
import {
  type ControlPlaneArgs,
  reportingFailures,
  requestControlPlanes,
  withControlPlaneOptions,
} from "./xds-client.ts";

interface ProxyStatusArgs extends ControlPlaneArgs {
  proxy?: string;
  file?: string;
  output: (typeof STATUS_OUTPUT_FORMATS)[number];
  verbose: boolean;
  namespace?: string;
}

export const proxyStatusCommand: CommandModule<object, ProxyStatusArgs> = {
  command: "proxy-status [proxy]",
  aliases: ["ps"],
  describe: "Sync status of every proxy connected to the control plane (from its syncz over xDS)",
  builder: (yargs) =>
    withControlPlaneOptions(yargs)
      .positional("proxy", { type: "string", describe: "Only proxies whose ID contains this" })
      .option("output", {
        alias: "o",
        choices: STATUS_OUTPUT_FORMATS,
        default: "table" as const,
        describe: "Output format",
      })
      .option("file", {
        alias: "f",
        type: "string",
        describe: "With a proxy: compare the control plane's config for it with this Envoy config dump",
      })
      .option("verbose", { type: "boolean", default: false, describe: "A column with the status of every xDS type" })
      .example("$0 proxy-status", "Every proxy's sync status, from each istiod pod of the kubeconfig's cluster")
      .example("$0 ps --kubeconfig ~/.kube/prod --context east --revision canary", "The canary control plane's")
      .example("$0 proxy-status --xds-address localhost:15010 --plaintext", "From a control plane's address")
      .example("$0 ps --xds-address istiod:15012 --cert-dir ./certs", "Over TLS with a client certificate")
      .example(
        "$0 ps productpage-v1 --xds-address localhost:15010 --plaintext --verbose",
        "One proxy, every type",
      ) as never,
  handler: (argv) =>
    reportingFailures(async () => {
      if (argv.file) {
        if (!argv.proxy) throw new Error("--file compares one proxy's config: name the proxy");
        const envoy = parseConfigDump(readFileSync(argv.file, "utf8"));
        process.stdout.write(compareDumps(await controlPlaneDump(argv, argv.proxy), envoy));
        process.exitCode = EXIT_OK;
        return;
      }
      const all = await requestControlPlanes(argv, SYNCZ_TYPE_URL);
      if (argv.proxy) {
        const wanted = argv.proxy;
        for (const response of all) {
          response.resources = response.resources.filter((r) =>
            unpackAny(r, csds.ClientConfigSchema)?.node?.id.includes(wanted),
          );
        }
        if (all.every((r) => r.resources.length === 0)) throw new Error(`no proxy matching "${wanted}" is connected`);
      }
      const responses = new Map(all.map((response) => [controlPlaneId(response), response]));
      const namespace = argv.namespace && argv.namespace !== "" ? argv.namespace : undefined;
      process.stdout.write(writeStatus(responses, { format: argv.output, verbose: argv.verbose, namespace }));
      process.exitCode = EXIT_OK;
    }),
};
