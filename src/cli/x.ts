// `sluice x`: experimental commands. Their modules load only when `x` is the command (its builder
// runs then), so that the other commands start without them.
import { groupCommand } from "./group-command.ts";

export const experimentalCommand = groupCommand({
  command: "x",
  aliases: ["experimental"],
  describe: "Experimental commands",
  builder: async (yargs) => {
    const [authz, checkInject, config, convert, describe, envoyFilter, internalDebug, precheck, translate] =
      await Promise.all([
        import("./authz-command.ts"),
        import("./check-inject.ts"),
        import("./config.ts"),
        import("./convert.ts"),
        import("./describe.ts"),
        import("./envoyfilter-diff.ts"),
        import("./internal-debug.ts"),
        import("./precheck.ts"),
        import("./translate.ts"),
      ]);
    return yargs
      .command(authz.authzCommand)
      .command(checkInject.checkInjectCommand)
      .command(config.configCommand)
      .command(convert.convertCommand)
      .command(describe.describeCommand)
      .command(envoyFilter.envoyFilterCommand)
      .command(internalDebug.internalDebugCommand)
      .command(precheck.precheckCommand)
      .command(translate.translateCommand);
  },
});
