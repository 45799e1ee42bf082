// VirtualService `corsPolicy` → the per-route config of envoy.filters.http.cors (Istio route.go
// TranslateCORSPolicy): origins as string matchers, comma-joined lists, max_age in whole seconds,
// always enabled, and unmatched preflights forwarded unless the policy says IGNORE.
import { create } from "@bufbuild/protobuf";
import { cors, envoyType, matcher } from "../../api/index.ts";
import type { VirtualServiceHttpCorsPolicy } from "../../config/index.ts";
import { durationSeconds } from "../duration.ts";
import { envoyStringMatcher } from "./match.ts";
import { runtimeFraction } from "./percent.ts";

export const CORS_FILTER = "envoy.filters.http.cors";

export function translateCorsPolicy(input: VirtualServiceHttpCorsPolicy): cors.CorsPolicy {
  const out = create(cors.CorsPolicySchema, {
    forwardNotMatchingPreflights: input.unmatchedPreflights !== "IGNORE",
    filterEnabled: runtimeFraction(
      create(envoyType.FractionalPercentSchema, {
        numerator: 100,
        denominator: envoyType.FractionalPercent_DenominatorType.HUNDRED,
      }),
    ),
    allowHeaders: (input.allowHeaders ?? []).join(","),
    allowMethods: (input.allowMethods ?? []).join(","),
    exposeHeaders: (input.exposeHeaders ?? []).join(","),
  });
  if (input.allowOrigins) {
    out.allowOriginStringMatch = input.allowOrigins.flatMap((m) => envoyStringMatcher(m) ?? []);
  } else if (input.allowOrigin) {
    // The deprecated exact-origin list.
    out.allowOriginStringMatch = input.allowOrigin.map((o) =>
      create(matcher.StringMatcherSchema, { matchPattern: { case: "exact", value: o } }),
    );
  }
  if (input.allowCredentials !== undefined && input.allowCredentials !== null) {
    out.allowCredentials = input.allowCredentials;
  }
  const maxAge = durationSeconds(input.maxAge);
  if (maxAge !== undefined) out.maxAge = maxAge.toString();
  return out;
}
