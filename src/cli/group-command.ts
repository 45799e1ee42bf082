// Commands that only group others (istioctl's parent commands, e.g. `waypoint`, `proxy-config`).
import type { Argv, CommandBuilder, CommandModule } from "yargs";

type GroupBuilder = ((yargs: Argv) => Argv) | ((yargs: Argv) => PromiseLike<Argv>);

/**
 * A parent command: run without a subcommand it prints its help on stdout and succeeds, as istioctl's
 * (cobra's) do; an unknown subcommand is still a usage error (strictCommands at the root).
 */
export function groupCommand(
  module: Omit<CommandModule, "handler" | "builder"> & { builder: GroupBuilder },
): CommandModule {
  // The builder's instance is this command's own context, so its help is this command's.
  let context: Argv | undefined;
  const { builder } = module;
  return {
    ...module,
    // yargs takes a builder returning either; its type lists the two apart.
    builder: ((yargs: Argv) => {
      context = yargs;
      return builder(yargs);
    }) as CommandBuilder,
    handler: () => {
      context?.showHelp("log");
    },
  };
}
