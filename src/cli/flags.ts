// Strict flag checking for the command line only. yargs' .strict() also rejects keys that come from
// SLUICE_* environment variables and the config file, which may hold settings for other commands
// (or for other tools: SLUICE_CONFORMANCE_DIR); a typo on the command line is what must fail.

/** The parts of yargs' parsed option table this check reads (`getOptions()`). */
export interface DeclaredOptions {
  key: Record<string, unknown>;
  alias: Record<string, string[]>;
}

/** Every name (and alias, and its camelCase spelling) the running command accepts. */
export function declaredFlagNames(options: DeclaredOptions): Set<string> {
  const names = new Set<string>(["help", "h"]);
  for (const [key, aliases] of [
    ...Object.keys(options.key).map((k) => [k, []] as const),
    ...Object.entries(options.alias),
  ]) {
    for (const name of [key, ...aliases]) {
      names.add(name);
      names.add(camelCase(name));
    }
  }
  return names;
}

/**
 * A yargs `.check()` that fails on command-line flags the running command does not declare. yargs
 * passes the command's option table as the second argument, though its typings call it an alias map.
 */
export function rejectUnknownCommandLineFlags(args: readonly string[]) {
  return (_argv: unknown, options: unknown): true | string => {
    const unknown = unknownCommandLineFlags(args, declaredFlagNames(options as DeclaredOptions));
    return unknown.length === 0 || `Unknown argument: ${unknown.join(", ")}`;
  };
}

/** Flags on the command line (before any "--") that are not declared; "-" alone is a value (stdin). */
export function unknownCommandLineFlags(args: readonly string[], declared: ReadonlySet<string>): string[] {
  const unknown: string[] = [];
  for (const arg of args) {
    if (arg === "--") break;
    const name = flagName(arg);
    if (name !== undefined && !declared.has(name) && !declared.has(name.replace(/^no-/, ""))) unknown.push(name);
  }
  return unknown;
}

function flagName(arg: string): string | undefined {
  if (arg.startsWith("--")) return arg.slice(2).split("=")[0];
  // "-f", "-fvalue", "-o=json": the letter after the dash names the flag. Negative numbers are values.
  if (arg.startsWith("-") && arg.length > 1 && !/^-\d/.test(arg)) return arg[1];
  return undefined;
}

function camelCase(name: string): string {
  return name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}
