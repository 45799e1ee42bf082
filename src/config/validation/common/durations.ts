// Durations as Istio's decoder reads them (Go time.ParseDuration) and Istio's duration and percentage rules.
import type { Findings } from "../findings.ts";
import { goFloat, goQuote } from "./format.ts";
import { asObject, field, type JsonObject } from "./json.ts";
import { report } from "./report.ts";

export interface GoDuration {
  /** Exact length in nanoseconds. */
  nanos: bigint;
  /** Length in milliseconds (may be fractional). */
  ms: number;
}

const NANOS_PER_UNIT: ReadonlyMap<string, bigint> = new Map([
  ["ns", 1n],
  ["us", 1_000n],
  ["\u00b5s", 1_000n],
  ["\u03bcs", 1_000n],
  ["ms", 1_000_000n],
  ["s", 1_000_000_000n],
  ["m", 60_000_000_000n],
  ["h", 3_600_000_000_000n],
]);
const MAX_NANOS = (1n << 63n) - 1n;
const NANOS_PER_MS = 1_000_000n;

/** Go's time.ParseDuration ("1h2m", "1.5s", "-1s", "0"); the error text is Go's. */
export function parseGoDuration(s: string): GoDuration | { error: string } {
  const invalid = { error: `time: invalid duration ${goQuote(s)}` };
  let rest = s;
  let negative = false;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    negative = rest.startsWith("-");
    rest = rest.slice(1);
  }
  if (rest === "0") return { nanos: 0n, ms: 0 };
  if (rest === "") return invalid;
  let total = 0n;
  while (rest !== "") {
    const m = /^([0-9]*)(?:\.([0-9]*))?/.exec(rest);
    const whole = m?.[1] ?? "";
    const frac = m?.[2];
    if (whole === "" && (frac === undefined || frac === "")) return invalid;
    rest = rest.slice(m?.[0].length ?? 0);
    const unitMatch = /^[^0-9.]*/.exec(rest);
    const unit = unitMatch?.[0] ?? "";
    if (unit === "") return { error: `time: missing unit in duration ${goQuote(s)}` };
    const perUnit = NANOS_PER_UNIT.get(unit);
    if (perUnit === undefined) return { error: `time: unknown unit ${goQuote(unit)} in duration ${goQuote(s)}` };
    rest = rest.slice(unit.length);
    let value = BigInt(whole || "0") * perUnit;
    if (frac) {
      // Go truncates the fraction to nanosecond resolution.
      const scale = 10n ** BigInt(frac.length);
      value += (BigInt(frac) * perUnit) / scale;
    }
    total += value;
    if (total > MAX_NANOS + (negative ? 1n : 0n)) return invalid;
  }
  const nanos = negative ? -total : total;
  return { nanos, ms: Number(nanos) / 1e6 };
}

/**
 * Reads a google.protobuf.Duration field as Istio's decoder does. A malformed value is reported
 * (`bad Duration: ...`) and reads as absent.
 */
export function readDuration(value: unknown, out: Findings): GoDuration | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") {
    out.error(`bad Duration: ${goQuote(JSON.stringify(value))} is not a duration string`);
    return undefined;
  }
  const parsed = parseGoDuration(value);
  if ("error" in parsed) {
    out.error(`bad Duration: ${parsed.error}`);
    return undefined;
  }
  return parsed;
}

/** Istio's ValidateDuration: at least 1ms, whole milliseconds. */
export function durationError(d: GoDuration): string | undefined {
  if (d.nanos < NANOS_PER_MS) return "duration must be greater than 1ms";
  if (d.nanos % NANOS_PER_MS !== 0n) return "only durations to ms precision are supported";
  return undefined;
}

/**
 * Reads the Duration field `name` (JSON or proto name) and, when set, applies Istio's duration rule;
 * findings go to `out.at(name)`. Returns the duration when it decoded.
 */
export function checkDurationField(container: JsonObject, name: string, out: Findings): GoDuration | undefined {
  const at = out.at(name);
  const d = readDuration(field(container, name), at);
  if (d) report(at, durationError(d));
  return d;
}

/** Decodes the Duration field `name` without applying a rule (fields Istio does not check). */
export function decodeDurationField(container: JsonObject, name: string, out: Findings): GoDuration | undefined {
  return readDuration(field(container, name), out.at(name));
}

/** Integer percentage 0..100 (outlier detection percents). */
export function intPercentError(value: number): string | undefined {
  return value >= 0 && value <= 100 ? undefined : `percentage ${value} is not in range 0..100`;
}

/** istio.networking.v1alpha3.Percent: 0, or between 0.0001 and 100. */
export function percentError(value: number): string | undefined {
  return value === 0 || (value >= 0.0001 && value <= 100)
    ? undefined
    : `percentage ${goFloat(value)} is neither 0.0, nor in range [0.0001, 100.0]`;
}

/** Validates a `Percent` message (`{ value: number }`) when present. */
export function validatePercentMessage(percent: unknown, out: Findings): boolean {
  const obj = asObject(percent);
  if (!obj) return true;
  return report(out, percentError(typeof obj.value === "number" ? obj.value : 0));
}
