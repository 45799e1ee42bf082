// VirtualService durations ("10s", "0.5s", "100ms") as protobuf Durations.
import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema } from "@bufbuild/protobuf/wkt";
import { parseGoDuration } from "../../config/validation/common/durations.ts";

const NANOS_PER_SECOND = 1_000_000_000n;

/** The zero Duration Istio sets to turn Envoy's default timeouts off. */
export const ZERO_DURATION: Duration = create(DurationSchema, {});

/** The Duration a validated VirtualService duration stands for; undefined when it does not parse. */
export function toDuration(text: string | undefined): Duration | undefined {
  if (text === undefined || text === "") return undefined;
  const parsed = parseGoDuration(text);
  if ("error" in parsed) return undefined;
  return create(DurationSchema, {
    seconds: parsed.nanos / NANOS_PER_SECOND,
    nanos: Number(parsed.nanos % NANOS_PER_SECOND),
  });
}

/** Whole seconds of a duration text (CORS max_age); undefined when it does not parse. */
export function durationSeconds(text: string | undefined): bigint | undefined {
  return toDuration(text)?.seconds;
}
