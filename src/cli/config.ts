// The CLI's own defaults: a config file whose keys are flag names (`output: json`), found at
// $SLUICECONFIG (istioctl's $ISTIOCONFIG) or $SLUICE_CONFIG, else ~/.sluice/config.yaml (or
// ~/.config/sluice/config.yaml when only that one exists). SLUICE_* environment variables override
// it and command-line flags override both (yargs applies that precedence). `sluice x config list`
// shows the global flags' effective values.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { CommandModule } from "yargs";
import { groupCommand } from "./group-command.ts";
import { alignTabs } from "./proxy-config-tabwriter.ts";

// The YAML parser loads only when there is a config file to read (yargs reads it synchronously), so
// that sluice starts quickly without one.
const require = createRequire(import.meta.url);

/** The config file read when neither --config nor $SLUICE_CONFIG names one. */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SLUICECONFIG) return env.SLUICECONFIG;
  const home = join(homedir(), ".sluice", "config.yaml");
  const xdg = join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "sluice", "config.yaml");
  return existsSync(xdg) && !existsSync(home) ? xdg : home;
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
    const { parse } = require("yaml") as typeof import("yaml");
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

/** The global flags (istioctl's root flags) and their defaults, as `x config list` shows them. */
export const GLOBAL_FLAGS: readonly { name: string; alias?: string; default?: string; describe: string }[] = [
  { name: "kubeconfig", alias: "c", describe: "Kubernetes configuration file" },
  { name: "context", describe: "The kubeconfig context to use" },
  { name: "namespace", alias: "n", describe: "The namespace (commands filter or look up in it)" },
  { name: "istioNamespace", alias: "i", default: "istio-system", describe: "The control plane's namespace" },
  { name: "xds-address", describe: "The control plane's xDS address (host:port), for use without Kubernetes" },
  { name: "log_output_level", describe: "Log levels: <scope>:<level>,..." },
];

interface ConfigListArgs {
  config: string;
  [flag: string]: unknown;
}

const listCommand: CommandModule<object, ConfigListArgs> = {
  command: "list",
  describe: "The global flags' effective values and where each comes from",
  builder: (yargs) =>
    yargs.example("$0 x config list", "FLAG, VALUE and FROM (default, environment or config file)") as never,
  handler: (argv) => {
    const file = loadCliConfig(argv.config);
    const fromFile = file instanceof Error ? {} : file;
    const rows = [["FLAG", "VALUE", "FROM"]];
    for (const flag of [...GLOBAL_FLAGS].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      // yargs reads istioNamespace from SLUICE_ISTIO_NAMESPACE, xds-address from SLUICE_XDS_ADDRESS.
      const envName = `SLUICE_${flag.name
        .replace(/([a-z])([A-Z])/g, "$1_$2")
        .replace(/-/g, "_")
        .toUpperCase()}`;
      const from = process.env[envName] !== undefined ? envName : flag.name in fromFile ? argv.config : "default";
      const value = argv[flag.name];
      rows.push([flag.name, value === undefined ? "" : String(value), from]);
    }
    process.stdout.write(alignTabs(rows.map((r) => `${r.join("\t")}\n`).join(""), { minWidth: 0, padding: 5 }));
  },
};

export const configCommand = groupCommand({
  command: "config",
  describe: "The CLI's configurable defaults",
  builder: (yargs) => yargs.command(listCommand),
});
