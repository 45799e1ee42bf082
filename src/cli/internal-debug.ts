// `sluice x internal-debug <endpoint>` (istioctl's internal-debug): any of the control plane's debug
// endpoints (syncz, configz, config_dump?proxyID=..., ...) over xDS, printed as the control plane
// answered it (each istiod pod's answer in turn, without --xds-address). Flags and help only: the
// xDS client loads when the command runs.
import type { CommandModule } from "yargs";
import { DEBUG_TYPE_PREFIX } from "../xds/types.ts";
import { reportingFailures } from "./command-error.ts";
import { type ControlPlaneArgs, withControlPlaneOptions } from "./control-plane-options.ts";
import { EXIT_OK } from "./exit-codes.ts";

interface InternalDebugArgs extends ControlPlaneArgs {
  endpoint: string;
}

export const internalDebugCommand: CommandModule<object, InternalDebugArgs> = {
  command: "internal-debug <endpoint>",
  describe: "Ask the control plane for one of its debug endpoints over xDS",
  builder: (yargs) =>
    withControlPlaneOptions(yargs)
      .positional("endpoint", {
        type: "string",
        demandOption: true,
        describe: "The endpoint, with its query: configz, config_dump?proxyID=ID",
      })
      .example("$0 x internal-debug syncz", "Every proxy's sync status, from each istiod pod of the cluster")
      .example("$0 x internal-debug syncz --xds-address localhost:15010 --plaintext", "From a control plane's address")
      .example(
        "$0 x internal-debug 'config_dump?proxyID=client.default' --xds-address istiod:15012",
        "One proxy's config",
      ) as never,
  handler: (argv) =>
    reportingFailures(async () => {
      const { debugBodies, requestControlPlanes } = await import("./xds-client.ts");
      const q = argv.endpoint.indexOf("?");
      const name = q < 0 ? argv.endpoint : argv.endpoint.slice(0, q);
      const query = q < 0 ? [] : [argv.endpoint.slice(q + 1)];
      for (const response of await requestControlPlanes(argv, `${DEBUG_TYPE_PREFIX}${name}`, query)) {
        for (const body of debugBodies(response)) process.stdout.write(body.endsWith("\n") ? body : `${body}\n`);
      }
      process.exitCode = EXIT_OK;
    }),
};
