// `sluice x authz check <pod|proxyID> | --file dump.json` (istioctl's authz check): the
// AuthorizationPolicies applied to a proxy, from its config dump. Flags and help only: the dump loads
// and authz-check.ts reads it when the command runs.
import type { CommandModule } from "yargs";
import { reportingFailures } from "./command-error.ts";
import { EXIT_OK } from "./exit-codes.ts";
import { groupCommand } from "./group-command.ts";
import type { ProxyDumpArgs } from "./proxy-config-args.ts";
import { proxyDumpOptions } from "./proxy-config-command.ts";

const checkCommand: CommandModule<object, ProxyDumpArgs> = {
  command: "check [proxy]",
  describe: "The AuthorizationPolicies applied to a proxy (from its config dump)",
  builder: (yargs) =>
    proxyDumpOptions(yargs)
      .example("$0 x authz check echo.default --xds-address localhost:15010 --plaintext", "From the control plane")
      .example("$0 x authz check --file config_dump.json", "From an Envoy config dump") as never,
  handler: (argv) =>
    reportingFailures(async () => {
      const [{ loadDump }, { authzSummary }] = await Promise.all([
        import("./proxy-config.ts"),
        import("./authz-check.ts"),
      ]);
      process.stdout.write(authzSummary(await loadDump(argv)));
      process.exitCode = EXIT_OK;
    }),
};

export const authzCommand = groupCommand({
  command: "authz",
  describe: "Inspect authorization policies",
  builder: (yargs) => yargs.command(checkCommand),
});
