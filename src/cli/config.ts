// The CLI's own defaults: a config file whose keys are flag names (`output: json`), found at
// $SLUICE_CONFIG or ~/.config/sluice/config.yaml. SLUICE_* environment variables override it and
// command-line flags override both (yargs applies that precedence).
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { parse } from "yaml";

/** The config file read when neither --config nor $SLUICE_CONFIG names one. */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const configHome = env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(configHome, "sluice", "config.yaml");
}

/**
 * Reads the CLI config file for yargs' `.config()`. The default file may be absent; a file the user
 * named must exist. Returns an Error (yargs reports it as a usage error) rather than throwing.
 */
export function loadCliConfig(path: string): Record<string, unknown> | Error {
  if (!existsSync(path)) {
    return resolve(path) === resolve(defaultConfigPath()) ? {} : new Error(`config file ${path} does not exist`);
  }
  try {
    const parsed: unknown = parse(readFileSync(path, "utf8"));
    if (parsed === null || parsed === undefined) return {};
    if (typeof parsed !== "object" || Array.isArray(parsed)) {
      return new Error(`config file ${path} must be a mapping of flag names to values`);
    }
    return parsed as Record<string, unknown>;
  } catch (err) {
    return new Error(`cannot read config file ${path}: ${(err as Error).message}`);
  }
}
