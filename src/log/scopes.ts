// A program's logging scopes whose levels can change while it runs, as Istio's log scopes do through
// ControlZ (`istioctl admin log`): each scope's output level, and its stack trace level — a line at or
// above it carries the stack where it was logged (`stack`). The root logger is the `default` scope.
import { type DestinationStream, type Level, type Logger, pino } from "pino";
import { type OutputLevel, type OutputLevels, pinoLevel, scopeLevel } from "./output-level.ts";

/** What ControlZ says of a scope (Istio's scopeInfo, in its JSON field names). */
export interface ScopeInfo {
  name: string;
  description: string;
  output_level: OutputLevel;
  stack_trace_level: OutputLevel;
  log_callers: boolean;
}

const DEFAULT_SCOPE = "default";
/** pino's numbers for the levels a stack trace threshold may name ("none": never). */
const LEVEL_NUMBERS: Readonly<Record<OutputLevel, number>> = {
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  none: Number.POSITIVE_INFINITY,
};

interface Scope {
  description: string;
  loggers: Logger[];
  outputLevel: OutputLevel;
  stackTraceLevel: OutputLevel;
}

export class LogScopes {
  /** The `default` scope's logger, parent of every other. */
  readonly root: Logger;
  readonly #scopes = new Map<string, Scope>();
  /** Which scope each logger logs as, for the stack trace check. */
  readonly #scopeOf = new WeakMap<Logger, Scope>();

  constructor(
    name: string,
    private readonly levels: OutputLevels,
    private readonly programDefault: OutputLevel,
    private readonly descriptions: Readonly<Record<string, string>> = {},
    destination?: DestinationStream,
  ) {
    const options = {
      name,
      level: pinoLevel(scopeLevel(levels, DEFAULT_SCOPE, programDefault)),
      // Only a scope given a stack trace level pays for a stack.
      mixin: (_merge: object, level: number, logger: Logger) => {
        const scope = this.#scopeOf.get(logger);
        return scope && level >= LEVEL_NUMBERS[scope.stackTraceLevel] ? { stack: new Error().stack } : {};
      },
    };
    this.root = destination ? pino(options, destination) : pino(options);
    this.#register(DEFAULT_SCOPE, this.root);
    // Every scope the program has is listed (and settable) before its first logger is made, as Istio's.
    for (const scope of Object.keys(descriptions)) this.#register(scope);
  }

  /** The scope's logger, at the level --log_output_level gives it (or ControlZ set since). */
  logger(scope: string): Logger {
    if (scope === DEFAULT_SCOPE) return this.root;
    const known = this.#scopes.get(scope);
    const level = known?.outputLevel ?? scopeLevel(this.levels, scope, this.programDefault);
    const logger = this.root.child({ scope }, { level: pinoLevel(level) });
    this.#register(scope, logger);
    return logger;
  }

  /** Every scope, by name. */
  list(): ScopeInfo[] {
    return [...this.#scopes.keys()].sort().map((name) => this.info(name) as ScopeInfo);
  }

  info(name: string): ScopeInfo | undefined {
    const scope = this.#scopes.get(name);
    if (!scope) return undefined;
    return {
      name,
      description: scope.description,
      output_level: scope.outputLevel,
      stack_trace_level: scope.stackTraceLevel,
      log_callers: false,
    };
  }

  /** Sets the levels given (an unknown level name leaves that level, as Istio); false for an unknown scope. */
  update(name: string, change: { output_level?: unknown; stack_trace_level?: unknown }): boolean {
    const scope = this.#scopes.get(name);
    if (!scope) return false;
    if (isOutputLevel(change.output_level)) {
      scope.outputLevel = change.output_level;
      for (const logger of scope.loggers) logger.level = pinoLevel(change.output_level) as Level;
    }
    if (isOutputLevel(change.stack_trace_level)) scope.stackTraceLevel = change.stack_trace_level;
    return true;
  }

  #register(name: string, logger?: Logger): void {
    let scope = this.#scopes.get(name);
    if (!scope) {
      scope = {
        description: this.descriptions[name] ?? "",
        loggers: [],
        outputLevel: scopeLevel(this.levels, name, this.programDefault),
        stackTraceLevel: "none",
      };
      this.#scopes.set(name, scope);
    }
    if (!logger) return;
    scope.loggers.push(logger);
    this.#scopeOf.set(logger, scope);
  }
}

/** The levels ControlZ takes: Istio's (fatal is not one of them). */
function isOutputLevel(value: unknown): value is OutputLevel {
  return value === "debug" || value === "info" || value === "warn" || value === "error" || value === "none";
}
