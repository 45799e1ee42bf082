// Istio's --log_output_level: `<scope>:<level>,<scope>:<level>,...` with levels none, fatal, error,
// warn, info and debug. A bare level is the `default` scope's; the scope `all` (Istio's override
// scope) gives every scope its level. Scopes a program does not log to are accepted, as Istio's
// components accept each other's scope names.
import type { LevelWithSilent, Logger } from "pino";

export const OUTPUT_LEVELS = ["none", "fatal", "error", "warn", "info", "debug"] as const;
export type OutputLevel = (typeof OUTPUT_LEVELS)[number];

const FLAG = "--log_output_level";
const DEFAULT_SCOPE = "default";
const OVERRIDE_SCOPE = "all";

/** The levels the flag names: per scope (the last one given wins), and the override for all scopes. */
export interface OutputLevels {
  readonly scopes: ReadonlyMap<string, OutputLevel>;
  readonly all?: OutputLevel;
}

/** No scope named: every scope logs at its program's default level. */
export const NO_OUTPUT_LEVELS: OutputLevels = { scopes: new Map() };

function isOutputLevel(value: string): value is OutputLevel {
  return (OUTPUT_LEVELS as readonly string[]).includes(value);
}

/** Parses the flag's value; throws an Error naming the flag and the bad entry. */
export function parseOutputLevels(value: string): OutputLevels {
  const scopes = new Map<string, OutputLevel>();
  let all: OutputLevel | undefined;
  for (const entry of value.split(",")) {
    const parts = entry.split(":");
    if (parts.length > 2 || (parts[0] === "" && parts.length === 2)) {
      throw new Error(`${FLAG}: "${entry}" is not <scope>:<level> or <level>`);
    }
    const [scope, level] = parts.length === 1 ? [DEFAULT_SCOPE, parts[0]] : parts;
    if (!isOutputLevel(level)) {
      throw new Error(`${FLAG}: invalid level "${level}" in "${entry}"; levels are ${OUTPUT_LEVELS.join(", ")}`);
    }
    // As Istio, the first `all` overrides everything else.
    if (scope === OVERRIDE_SCOPE) all ??= level;
    else scopes.set(scope, level);
  }
  return { scopes, all };
}

/**
 * A scope's level: `all`, else its own, else the `default` scope's (so a bare `debug` reaches every
 * scope, where Istio would leave the other scopes at info), else the program's default.
 */
export function scopeLevel(levels: OutputLevels, scope: string, programDefault: OutputLevel): OutputLevel {
  return levels.all ?? levels.scopes.get(scope) ?? levels.scopes.get(DEFAULT_SCOPE) ?? programDefault;
}

export function pinoLevel(level: OutputLevel): LevelWithSilent {
  return level === "none" ? "silent" : level;
}

/** A child of `root` that logs as `scope` at the scope's level (which may be more verbose than root's). */
export function scopedLogger(root: Logger, levels: OutputLevels, scope: string, programDefault: OutputLevel): Logger {
  return root.child({ scope }, { level: pinoLevel(scopeLevel(levels, scope, programDefault)) });
}
