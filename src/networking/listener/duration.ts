// Go duration text (node metadata IDLE_TIMEOUT, DestinationRule timeouts) as a protobuf Duration.
import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema } from "@bufbuild/protobuf/wkt";
import { parseGoDuration } from "../../config/validation/common/durations.ts";

const NANOS_PER_SECOND = 1_000_000_000n;

/** undefined when absent or not a Go duration (Istio then leaves the field unset). */
export function durationFromGo(text: string | undefined): Duration | undefined {
  if (!text) return undefined;
  const parsed = parseGoDuration(text);
  if ("error" in parsed) return undefined;
  return create(DurationSchema, {
    seconds: parsed.nanos / NANOS_PER_SECOND,
    nanos: Number(parsed.nanos % NANOS_PER_SECOND),
  });
}
