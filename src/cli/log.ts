// The CLI's log: JSON lines on standard error, one pino logger per scope at the level the global
// --log_output_level gives it. Unnamed scopes log warnings and errors only, as istioctl's do, so a
// command's output is its own unless debug lines are asked for.
import { createRequire } from "node:module";
import type { DestinationStream, Logger } from "pino";
import { NO_OUTPUT_LEVELS, type OutputLevels, parseOutputLevels, scopedLogger } from "../log/index.ts";

// pino is required when a command first logs rather than imported: most commands never log, and
// loading it would slow every start.
const require = createRequire(import.meta.url);

/** Where the CLI does I/O: config files (default), the Kubernetes API, xDS, HTTP endpoints. */
export type CliScope = "default" | "kube" | "xds" | "http";

const PROGRAM_DEFAULT_LEVEL = "warn";

let levels: OutputLevels = NO_OUTPUT_LEVELS;
let destination: DestinationStream | undefined;
let root: Logger | undefined;
const loggers = new Map<CliScope, Logger>();

/**
 * Applies the flag's value (undefined: the defaults); throws on an invalid one. `to` is for tests;
 * the log goes to standard error otherwise.
 */
export function configureCliLog(outputLevels: string | undefined, to?: DestinationStream): void {
  levels = outputLevels === undefined ? NO_OUTPUT_LEVELS : parseOutputLevels(outputLevels);
  destination = to;
  root = undefined;
  loggers.clear();
}

/** The logger of one scope. */
export function cliLog(scope: CliScope): Logger {
  let logger = loggers.get(scope);
  if (!logger) {
    root ??= rootLogger();
    logger = scopedLogger(root, levels, scope, PROGRAM_DEFAULT_LEVEL);
    loggers.set(scope, logger);
  }
  return logger;
}

function rootLogger(): Logger {
  const { pino } = require("pino") as typeof import("pino");
  return pino(
    {
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    // Synchronous, so no line is lost when a command exits.
    destination ?? pino.destination({ fd: 2, sync: true }),
  );
}
