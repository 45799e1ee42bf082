// Istio percentages as Envoy FractionalPercents: a `Percent` (0-100, fractional) counts in millionths,
// a legacy integer percent in hundredths.
import { create } from "@bufbuild/protobuf";
import { core, envoyType } from "../../api/index.ts";

/** `percentage: {value: p}` → numerator p×10,000 of a MILLION (truncated, as Go's uint32 conversion). */
export function percentToFractional(value: number): envoyType.FractionalPercent {
  return create(envoyType.FractionalPercentSchema, {
    numerator: Math.trunc(value * 10000),
    denominator: envoyType.FractionalPercent_DenominatorType.MILLION,
  });
}

/** A legacy integer percent → numerator n of a HUNDRED. */
export function integerToFractional(value: number): envoyType.FractionalPercent {
  return create(envoyType.FractionalPercentSchema, {
    numerator: Math.trunc(value),
    denominator: envoyType.FractionalPercent_DenominatorType.HUNDRED,
  });
}

export function runtimeFraction(defaultValue: envoyType.FractionalPercent): core.RuntimeFractionalPercent {
  return create(core.RuntimeFractionalPercentSchema, { defaultValue });
}
