// Decoding failures Istio's webhook reports for the policy kinds (security, telemetry, extensions):
// an enum given by an unknown name or number, a map key that is not a uint32. Worded as the decoder's
// error, without the webhook's "error decoding configuration:" wrapper (as common/durations.ts).
import { goQuote } from "./common/format.ts";
import type { Findings } from "./findings.ts";

/**
 * The enum's value name, accepting a name or (as jsonpb does) its number. Reports a decode error and
 * returns undefined for anything else; an absent value reads as the zero name (`names[0]`).
 */
export function decodeEnum(
  value: unknown,
  names: readonly string[],
  protoName: string,
  out: Findings,
): string | undefined {
  if (value === undefined || value === null) return names[0];
  if (typeof value === "string" && names.includes(value)) return value;
  if (typeof value === "number" && Number.isInteger(value) && value >= 0 && value < names.length) return names[value];
  out.error(`unknown value ${goQuote(JSON.stringify(value))} for enum ${protoName}`);
  return undefined;
}

/** A map key that must decode as a uint32 (PeerAuthentication port keys). */
export function decodeUint32Key(key: string, out: Findings): number | undefined {
  if (/^[0-9]+$/.test(key) && Number(key) <= 0xffffffff) return Number(key);
  out.error(`invalid map key ${goQuote(key)}: expected a uint32`);
  return undefined;
}
