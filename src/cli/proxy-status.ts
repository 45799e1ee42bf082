// `sluice proxy-status [proxy]` (istioctl's xDS proxy-status): every connected proxy's sync status
// from the control plane's `istio.io/debug/syncz` (--xds-address, or every istiod pod of the
// kubeconfig's cluster), as a table of subscribed types (with --verbose, each type's SYNCED /
// NOT SENT / STALE), or the responses as JSON or YAML. A proxy argument keeps the proxies whose ID
// contains it. Flags and help only: proxy-status-run.ts asks the control plane when the command runs.
import type { CommandModule } from "yargs";
import { reportingFailures } from "./command-error.ts";
import { withControlPlaneOptions } from "./control-plane-options.ts";
import { EXIT_OK } from "./exit-codes.ts";
import { type ProxyStatusArgs, STATUS_OUTPUT_FORMATS } from "./proxy-status-args.ts";

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
      const { proxyStatusOutput } = await import("./proxy-status-run.ts");
      process.stdout.write(await proxyStatusOutput(argv));
      process.exitCode = EXIT_OK;
    }),
};
