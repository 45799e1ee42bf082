// The sluice commands, one module each. A new command is one file here and one line below.
import type { Argv } from "yargs";
import { analyzeCommand } from "./analyze.ts";
import { kubeInjectCommand } from "./kube-inject.ts";
import { validateCommand } from "./validate.ts";
import { experimentalCommand } from "./x.ts";

export { defaultConfigPath, loadCliConfig } from "./config.ts";
export { EXIT_INVALID, EXIT_OK, EXIT_USAGE } from "./exit-codes.ts";
export { rejectUnknownCommandLineFlags } from "./flags.ts";

export function registerCommands(cli: Argv): Argv {
  return cli.command(analyzeCommand).command(validateCommand).command(kubeInjectCommand).command(experimentalCommand);
}
