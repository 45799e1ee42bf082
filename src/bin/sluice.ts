// sluice: the operator CLI (Istio's istioctl). Global flags and error handling only; each command
// lives in its own module under src/cli/.
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import { type DeclaredOptions, declaredFlagNames, unknownCommandLineFlags } from "../cli/flags.ts";
import { defaultConfigPath, EXIT_USAGE, loadCliConfig, registerCommands } from "../cli/index.ts";

const cli = yargs(hideBin(process.argv))
  .scriptName("sluice")
  .usage("$0 <command> [options]\n\nOperate a Sluice (Istio-compatible) service mesh.")
  .env("SLUICE")
  .option("config", {
    type: "string",
    global: true,
    default: defaultConfigPath(),
    defaultDescription: "$SLUICE_CONFIG or ~/.config/sluice/config.yaml",
  })
  .config(
    "config",
    "CLI defaults: a YAML file whose keys are flag names (any flag can also be set as SLUICE_<FLAG>)",
    loadCliConfig,
  );

await registerCommands(cli)
  .completion("completion", "Print a shell completion script (bash, zsh): sluice completion >> ~/.bashrc")
  .demandCommand(1, "Name a command; see --help.")
  .recommendCommands()
  .strictCommands()
  .check((_argv, options) => {
    // yargs passes the running command's option table, though its typings call it an alias map.
    const declared = declaredFlagNames(options as unknown as DeclaredOptions);
    const unknown = unknownCommandLineFlags(hideBin(process.argv), declared);
    return unknown.length === 0 || `Unknown argument: ${unknown.join(", ")}`;
  }, true)
  .help()
  .alias("help", "h")
  .version(false)
  .wrap(Math.min(120, process.stdout.columns ?? 120))
  .fail((message, error) => {
    // yargs' own failures would exit 1, which means "invalid input" here; a usage error is 2.
    process.stderr.write(`Error: ${message ?? error?.message}\n`);
    if (message) process.stderr.write("Run with --help for usage.\n");
    process.exit(EXIT_USAGE);
  })
  .parseAsync();
