// sluice: the operator CLI (Istio's istioctl). Global flags and error handling only; each command
// lives in its own module under src/cli/.
import yargs from "yargs";
import { hideBin } from "yargs/helpers";
import {
  defaultConfigPath,
  EXIT_USAGE,
  GLOBAL_FLAGS,
  loadCliConfig,
  registerCommands,
  rejectUnknownCommandLineFlags,
} from "../cli/index.ts";

const cli = yargs(hideBin(process.argv))
  .scriptName("sluice")
  .usage("$0 <command> [options]\n\nOperate a Sluice (Istio-compatible) service mesh.")
  // istioctl speaks English whatever the locale; yargs would otherwise translate only its own headings.
  .locale("en")
  .env("SLUICE")
  .option("config", {
    type: "string",
    global: true,
    default: defaultConfigPath(),
    defaultDescription: "$SLUICE_CONFIG, $SLUICECONFIG or ~/.sluice/config.yaml",
  })
  .config(
    "config",
    "CLI defaults: a YAML file whose keys are flag names (any flag can also be set as SLUICE_<FLAG>)",
    loadCliConfig,
  );
// istioctl's root flags; a command may declare its own spelling of one (its help says what it means there).
for (const flag of GLOBAL_FLAGS) {
  cli.option(flag.name, {
    type: "string",
    global: true,
    alias: flag.alias,
    default: flag.default,
    describe: flag.describe,
  });
}

try {
  const argv = await registerCommands(cli)
    .recommendCommands()
    .strictCommands()
    .check(rejectUnknownCommandLineFlags(hideBin(process.argv)), true)
    .help()
    .alias("help", "h")
    .version(false)
    .wrap(Math.min(120, process.stdout.columns ?? 120))
    .fail((message, error) => (message ? exitUsageError(message, true) : exitUsageError(describeError(error), false)))
    .parseAsync();
  // Without a command, the root's help, as istioctl prints it (stdout, success).
  if (argv._.length === 0) cli.showHelp("log");
} catch (err) {
  // A command that could not do its work (an unreadable file, say) has not found invalid input.
  exitUsageError(describeError(err), false);
}

// yargs' own failures would exit 1, which means "invalid input" here; not being able to run is 2.
function exitUsageError(message: string, showUsageHint: boolean): never {
  process.stderr.write(`Error: ${message}\n`);
  if (showUsageHint) process.stderr.write("Run with --help for usage.\n");
  process.exit(EXIT_USAGE);
}

// System errors (ENOENT, EACCES) speak for themselves; anything else is a bug, worth its stack.
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return "code" in err ? err.message : (err.stack ?? err.message);
}
