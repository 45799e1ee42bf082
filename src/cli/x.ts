// `sluice x`: experimental commands.
import type { CommandModule } from "yargs";
import { authzCommand } from "./authz-command.ts";
import { configCommand } from "./config.ts";
import { convertCommand } from "./convert.ts";
import { describeCommand } from "./describe.ts";
import { envoyFilterCommand } from "./envoyfilter-diff.ts";
import { internalDebugCommand } from "./internal-debug.ts";
import { precheckCommand } from "./precheck.ts";
import { translateCommand } from "./translate.ts";

export const experimentalCommand: CommandModule = {
  command: "x",
  aliases: ["experimental"],
  describe: "Experimental commands",
  builder: (yargs) =>
    yargs
      .command(authzCommand)
      .command(configCommand)
      .command(convertCommand)
      .command(describeCommand)
      .command(envoyFilterCommand)
      .command(internalDebugCommand)
      .command(precheckCommand)
      .command(translateCommand)
      .demandCommand(1, "Name an experimental command."),
  handler: () => {},
};
