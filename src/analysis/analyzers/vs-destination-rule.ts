// virtualservice.DestinationRuleAnalyzer: a subset a route or mirror destination names must be defined by
// a DestinationRule for that host.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, specOf } from "../resource.ts";
import { resourceNameFromHost } from "../service-lookup.ts";
import { type AnnotatedDestination, mirrorDestinations, routeDestinations } from "../vs-destinations.ts";

export const vsDestinationRuleAnalyzer: Analyzer = {
  name: "virtualservice.DestinationRuleAnalyzer",
  description: "Checks the destination rules associated with each virtual service",
  inputs: [K.VirtualService, K.DestinationRule],
  analyze(ctx) {
    // "<ns>/<name>+<subset>" of every subset DestinationRules define.
    const defined = new Set<string>();
    for (const rule of ctx.list(K.DestinationRule)) {
      const spec = specOf(rule);
      const host = resourceNameFromHost(rule.namespace, asString(spec.host));
      for (const subset of asArray(spec.subsets)) defined.add(`${host}+${asString(asRecord(subset).name)}`);
    }
    for (const vs of ctx.list(K.VirtualService)) {
      const check = (d: AnnotatedDestination, reftype: string) => {
        const host = asString(d.destination.host);
        const subset = asString(d.destination.subset);
        if (subset === "" || defined.has(`${resourceNameFromHost(vs.namespace, host)}+${subset}`)) return;
        ctx.report(
          atField(newMessage(MESSAGES.ReferencedResourceNotFound, vs, reftype, `${host}+${subset}`), d.hostField),
        );
      };
      for (const d of routeDestinations(vs)) check(d, "host+subset in destinationrule");
      for (const d of mirrorDestinations(vs)) check(d, "mirror+subset in destinationrule");
    }
  },
};
