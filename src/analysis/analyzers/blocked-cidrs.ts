// authn.BlockedCIDRsAnalyzer: when RequestAuthentications exist, istiod should restrict where it fetches
// JWKS from (BLOCKED_CIDRS_IN_JWKS_URIS on the istiod Deployment).
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, fullName, labelsOf, podSpecOf } from "../resource.ts";

const MAX_NAMES_SHOWN = 5;

export const blockedCidrsAnalyzer: Analyzer = {
  name: "authn.BlockedCIDRsAnalyzer",
  description:
    "Checks that BLOCKED_CIDRS_IN_JWKS_URIS is configured on istiod when RequestAuthentication resources exist",
  inputs: [K.RequestAuthentication, K.Deployment],
  analyze(ctx) {
    const names = ctx.list(K.RequestAuthentication).map(fullName);
    if (names.length === 0) return;
    const shown =
      names.length <= MAX_NAMES_SHOWN
        ? names.join(", ")
        : `${names.slice(0, MAX_NAMES_SHOWN).join(", ")}, and ${names.length - MAX_NAMES_SHOWN} more`;
    for (const deployment of ctx.list(K.Deployment)) {
      if (labelsOf(deployment).app !== "istiod") continue;
      const restricted = asArray(podSpecOf(deployment).containers)
        .flatMap((c) => asArray(asRecord(c).env))
        .some((e) => asRecord(e).name === "BLOCKED_CIDRS_IN_JWKS_URIS" && asString(asRecord(e).value) !== "");
      if (!restricted) ctx.report(newMessage(MESSAGES.JwksUriFetchUnrestricted, deployment, names.length, shown));
    }
  },
};
