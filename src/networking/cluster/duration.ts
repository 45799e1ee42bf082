// Durations written in config ("10s", "1.5s", "1h") as protobuf Durations.
import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema } from "@bufbuild/protobuf/wkt";
import { parseGoDuration } from "../../config/validation/common/durations.ts";

const NANOS_PER_SECOND = 1_000_000_000n;

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
