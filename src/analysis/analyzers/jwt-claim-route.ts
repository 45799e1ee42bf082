// virtualservice.JWTClaimRouteAnalyzer: routing on JWT claims (@request.auth.claims headers) through a
// gateway needs a RequestAuthentication selecting the gateway's pods (in istio-system or their namespace).
import { jwtClaimPath } from "../../networking/route/match.ts";
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { selectorMatches } from "../labels.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import {
  asArray,
  asRecord,
  asStringArray,
  asStringMap,
  joinFullName,
  labelsOf,
  type Resource,
  shortOrFullName,
  specOf,
} from "../resource.ts";

export const jwtClaimRouteAnalyzer: Analyzer = {
  name: "virtualservice.JWTClaimRouteAnalyzer",
  description: "Checks the VirtualService using JWT claim based routing has corresponding RequestAuthentication",
  inputs: [K.VirtualService, K.RequestAuthentication, K.Gateway, K.Pod],
  analyze(ctx) {
    const selectorsByNamespace = new Map<string, Record<string, string>[]>();
    for (const ra of ctx.list(K.RequestAuthentication)) {
      const selector = asStringMap(asRecord(specOf(ra).selector).matchLabels);
      selectorsByNamespace.set(ra.namespace, [...(selectorsByNamespace.get(ra.namespace) ?? []), selector]);
    }
    for (const vs of ctx.list(K.VirtualService)) {
      const claimKey = jwtClaimRouteKey(vs);
      if (claimKey === undefined) continue;
      for (const gatewayName of asStringArray(specOf(vs).gateways)) {
        if (gatewayName === "mesh") continue;
        const ref = shortOrFullName(vs.namespace, gatewayName);
        const gateway = ctx.find(K.Gateway, ref.namespace, ref.name);
        if (!gateway) continue;
        const gatewaySelector = asStringMap(specOf(gateway).selector);
        for (const pod of ctx.list(K.Pod)) {
          const podLabels = labelsOf(pod);
          if (!selectorMatches(gatewaySelector, podLabels)) continue;
          const selectors = [
            ...(selectorsByNamespace.get("istio-system") ?? []),
            ...(selectorsByNamespace.get(pod.namespace) ?? []),
          ];
          if (selectors.some((s) => selectorMatches(s, podLabels))) continue;
          ctx.report(
            newMessage(MESSAGES.JwtClaimBasedRoutingWithoutRequestAuthN, vs, claimKey, joinFullName(ref), pod.name),
          );
        }
      }
    }
  },
};

/** The first header or withoutHeaders key of an HTTP match that routes on a JWT claim. */
function jwtClaimRouteKey(vs: Resource): string | undefined {
  for (const rule of asArray(specOf(vs).http).map(asRecord)) {
    for (const match of asArray(rule.match).map(asRecord)) {
      for (const key of [...Object.keys(asRecord(match.headers)), ...Object.keys(asRecord(match.withoutHeaders))]) {
        if (jwtClaimPath(key)) return key;
      }
    }
  }
  return undefined;
}
