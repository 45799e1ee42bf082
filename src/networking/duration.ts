// Durations written in config ("10s", "1.5s", "100ms", Go's syntax) as protobuf Durations, for every
// Envoy builder.
import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema } from "@bufbuild/protobuf/wkt";
import { parseGoDuration } from "../config/index.ts";

const NANOS_PER_SECOND = 1_000_000_000n;

/** The zero Duration Istio sets to turn Envoy's default timeouts off. */
export const ZERO_DURATION: Duration = create(DurationSchema, {});

/** The Duration a validated config duration stands for; undefined when unset or unparsable. */
export function toDuration(text: string | undefined): Duration | undefined {
  if (text === undefined || text === "") return undefined;
  const parsed = parseGoDuration(text);
  if ("error" in parsed) return undefined;
  return durationFromNanos(parsed.nanos);
}

export function durationFromNanos(nanos: bigint): Duration {
  return create(DurationSchema, { seconds: nanos / NANOS_PER_SECOND, nanos: Number(nanos % NANOS_PER_SECOND) });
}

export function durationFromSeconds(seconds: number): Duration {
  return create(DurationSchema, { seconds: BigInt(seconds) });
}

/** Whole seconds of a duration text (CORS max_age); undefined when it does not parse. */
export function durationSeconds(text: string | undefined): bigint | undefined {
  return toDuration(text)?.seconds;
}
