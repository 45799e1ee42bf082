// `sluice x`: experimental commands.
import type { CommandModule } from "yargs";
import { convertCommand } from "./convert.ts";
import { envoyFilterCommand } from "./envoyfilter-diff.ts";
import { translateCommand } from "./translate.ts";

export const experimentalCommand: CommandModule = {
  command: "x",
  aliases: ["experimental"],
  describe: "Experimental commands",
  builder: (yargs) =>
    yargs
      .command(convertCommand)
      .command(envoyFilterCommand)
      .command(translateCommand)
      .demandCommand(1, "Name an experimental command."),
  handler: () => {},
};
