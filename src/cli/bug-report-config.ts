// `sluice bug-report -f FILE`: istioctl's BugReportConfig, read from YAML, and how it combines with
// the flags. istioctl merges the flags' settings over the file's (a JSON merge patch: a flag that is
// set replaces the file's value, a list whole); Sluice does the same with the flags given on the
// command line, and the built-in defaults under both. Unlike istioctl (which ignores them), an
// unknown field, a value of the wrong type, a bad duration, time, spec or glob is an error naming the
// file and the field.
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { parseGoDuration } from "../config/index.ts";
import { globSyntaxError, parseSelectionSpec } from "./bug-report-select.ts";

/** What `sluice bug-report` runs with, from its defaults, -f's file and its flags. */
export interface BugReportSettings {
  kubeconfig?: string;
  context?: string;
  istioNamespace: string;
  dryRun: boolean;
  fullSecrets: boolean;
  proxyAdminPort: number;
  /** A Go duration. */
  timeout: string;
  include: string[];
  exclude: string[];
  /** RFC 3339 */
  startTime?: string;
  endTime?: string;
  /** A Go duration back from endTime. */
  duration?: string;
  criticalErrors: string[];
  ignoredErrors: string[];
  concurrency: number;
  tail: number;
  skipClusterDump: boolean;
  skipAnalyze: boolean;
  skipProxyDebug: boolean;
  skipNetstat: boolean;
  skipCoredumps: boolean;
}

export const BUG_REPORT_DEFAULTS: Readonly<BugReportSettings> = {
  istioNamespace: "istio-system",
  dryRun: false,
  fullSecrets: false,
  proxyAdminPort: 15000,
  timeout: "30m",
  include: [],
  exclude: [],
  criticalErrors: [],
  ignoredErrors: [],
  concurrency: 32,
  tail: 0,
  skipClusterDump: false,
  skipAnalyze: false,
  skipProxyDebug: false,
  skipNetstat: false,
  skipCoredumps: false,
};

type FieldType = "string" | "bool" | "count" | "duration" | "time" | "specs" | "globs";

/** istioctl's BugReportConfig fields (their JSON names) → the setting each gives, and its type. */
const FILE_FIELDS: Readonly<Record<string, [keyof BugReportSettings | undefined, FieldType]>> = {
  kubeConfigPath: ["kubeconfig", "string"],
  context: ["context", "string"],
  istioNamespace: ["istioNamespace", "string"],
  dryRun: ["dryRun", "bool"],
  fullSecrets: ["fullSecrets", "bool"],
  proxyAdminPort: ["proxyAdminPort", "count"],
  commandTimeout: ["timeout", "duration"],
  include: ["include", "specs"],
  exclude: ["exclude", "specs"],
  startTime: ["startTime", "time"],
  endTime: ["endTime", "time"],
  since: ["duration", "duration"],
  // istioctl derives it from the times; the times decide here too, so it is read and not used.
  timeFilterApplied: [undefined, "bool"],
  criticalErrors: ["criticalErrors", "globs"],
  ignoredErrors: ["ignoredErrors", "globs"],
  requestConcurrency: ["concurrency", "count"],
  tailLines: ["tail", "count"],
  skipClusterDump: ["skipClusterDump", "bool"],
  skipAnalyze: ["skipAnalyze", "bool"],
  skipProxyDebug: ["skipProxyDebug", "bool"],
  skipNetstat: ["skipNetstat", "bool"],
  skipCoredumps: ["skipCoredumps", "bool"],
};

const TIME_SETTINGS = ["startTime", "endTime", "duration"] as const;

/** Why a glob list is bad (the first bad pattern), or undefined. `field` names where the list came from. */
export function globListError(field: string, patterns: readonly string[]): string | undefined {
  for (const [i, pattern] of patterns.entries()) {
    const why = globSyntaxError(pattern);
    if (why)
      return `${field}${patterns.length > 1 ? `[${i}]` : ""}: bad glob pattern ${JSON.stringify(pattern)}: ${why}`;
  }
  return undefined;
}

/** A file's settings, from its YAML text; throws an Error naming `path` and the bad field. */
export function parseBugReportConfig(text: string, path: string): Partial<BugReportSettings> {
  let document: unknown;
  try {
    document = parse(text);
  } catch (err) {
    throw new Error(`${path}: not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (document === null || document === undefined) return {};
  if (typeof document !== "object" || Array.isArray(document))
    throw new Error(`${path}: must be a mapping of bug-report config fields (${Object.keys(FILE_FIELDS).join(", ")})`);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(document)) {
    // Go's encoding/json (istioctl's reader) matches field names regardless of case.
    const name =
      Object.keys(FILE_FIELDS).find((f) => f === key) ??
      Object.keys(FILE_FIELDS).find((f) => f.toLowerCase() === key.toLowerCase());
    if (name === undefined)
      throw new Error(`${path}: unknown field "${key}"; the fields are ${Object.keys(FILE_FIELDS).join(", ")}`);
    if (value === null) continue; // as in a merge patch: unset
    const [setting, type] = FILE_FIELDS[name];
    const bad = (what: string) => new Error(`${path}: field ${name}: ${what}, not ${JSON.stringify(value)}`);
    let parsed: unknown;
    switch (type) {
      case "string":
        if (typeof value !== "string") throw bad("must be a string");
        parsed = value;
        break;
      case "bool":
        if (typeof value !== "boolean") throw bad("must be true or false");
        parsed = value;
        break;
      case "count":
        if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw bad("must be a whole number");
        parsed = value;
        break;
      case "duration": {
        // As istioctl's config.Duration: a Go duration, or a number of nanoseconds.
        if (typeof value === "number" && Number.isFinite(value)) parsed = `${Math.trunc(value)}ns`;
        else if (typeof value === "string") {
          const duration = parseGoDuration(value);
          if ("error" in duration) throw new Error(`${path}: field ${name}: ${duration.error}`);
          parsed = value;
        } else throw bad("must be a duration (such as 30m) or a number of nanoseconds");
        break;
      }
      case "time":
        if (typeof value !== "string" || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value))
          throw bad("must be an RFC 3339 time such as 2006-01-02T15:04:05Z");
        parsed = value;
        break;
      case "specs":
      case "globs": {
        if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) throw bad("must be a list of strings");
        for (const [i, entry] of (value as string[]).entries()) {
          if (type === "specs") {
            try {
              parseSelectionSpec(entry);
            } catch (err) {
              throw new Error(`${path}: field ${name}[${i}]: ${(err as Error).message}`);
            }
          } else {
            const why = globSyntaxError(entry);
            if (why) throw new Error(`${path}: field ${name}[${i}]: bad glob pattern ${JSON.stringify(entry)}: ${why}`);
          }
        }
        parsed = value;
        break;
      }
    }
    if (setting) out[setting] = parsed;
  }
  return out as Partial<BugReportSettings>;
}

/** -f's file: read and parsed; an unreadable file throws an Error naming it. */
export function readBugReportConfig(path: string): Partial<BugReportSettings> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`cannot read the bug-report config file ${path}: ${(err as Error).message}`);
  }
  return parseBugReportConfig(text, path);
}

/**
 * The settings: the defaults, under the file's, under the flags given (undefined: not given). A list
 * replaces the one under it whole. The log time range is one setting: any of --start-time,
 * --end-time and --duration replaces the file's startTime, endTime and since together.
 */
export function mergeBugReportSettings(
  flags: Partial<BugReportSettings>,
  file: Partial<BugReportSettings>,
): BugReportSettings {
  const out: Record<string, unknown> = { ...BUG_REPORT_DEFAULTS };
  const flagsSetTimes = TIME_SETTINGS.some((k) => flags[k] !== undefined);
  for (const [key, value] of Object.entries(file)) {
    if (value === undefined || (flagsSetTimes && (TIME_SETTINGS as readonly string[]).includes(key))) continue;
    out[key] = value;
  }
  for (const [key, value] of Object.entries(flags)) if (value !== undefined) out[key] = value;
  return out as unknown as BugReportSettings;
}
