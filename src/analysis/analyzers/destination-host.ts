// virtualservice.DestinationHostAnalyzer: route and mirror destinations must name a known service (and
// one of its ports, which is required when it has several); and a gateway-bound route to a host without
// a subset is not affected by the subset routing another VirtualService does for that host.
import type { AnalysisContext, Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, asStringArray, fullName, type Resource, specOf } from "../resource.ts";
import { destinationHost, type ServiceEntryView, serviceHostMap } from "../service-lookup.ts";
import { type AnnotatedDestination, mirrorDestinations, routeDestinations } from "../vs-destinations.ts";

export const destinationHostAnalyzer: Analyzer = {
  name: "virtualservice.DestinationHostAnalyzer",
  description: "Checks the destination hosts associated with each virtual service",
  inputs: [K.ServiceEntry, K.VirtualService, K.Service],
  analyze(ctx) {
    const services = serviceHostMap(ctx);
    const subsetRouted = subsetRoutedHosts(ctx);
    for (const vs of ctx.list(K.VirtualService)) {
      const exportTo = asStringArray(specOf(vs).exportTo);
      const check = (d: AnnotatedDestination, reftype: string) => {
        const host = asString(d.destination.host);
        const service = destinationHost(vs.namespace, exportTo, host, services);
        if (service) checkPorts(ctx, vs, d, service);
        else ctx.report(atField(newMessage(MESSAGES.ReferencedResourceNotFound, vs, reftype, host), d.hostField));
      };
      for (const d of routeDestinations(vs)) check(d, "host");
      for (const d of mirrorDestinations(vs)) check(d, "mirror host");
      checkIngressSubsets(ctx, vs, subsetRouted);
    }
  },
};

function checkPorts(ctx: AnalysisContext, vs: Resource, d: AnnotatedDestination, service: ServiceEntryView): void {
  const host = asString(d.destination.host);
  const port = d.destination.port;
  if (port === undefined || port === null) {
    if (service.ports.length > 1) {
      const numbers = service.ports.map((p) => String(p.number));
      ctx.report(
        atField(newMessage(MESSAGES.VirtualServiceDestinationPortSelectorRequired, vs, host, numbers), d.hostField),
      );
    }
    return;
  }
  const number = Number(asRecord(port).number ?? 0);
  if (!service.ports.some((p) => p.number === number)) {
    ctx.report(
      atField(newMessage(MESSAGES.ReferencedResourceNotFound, vs, "host:port", `${host}:${number}`), d.hostField),
    );
  }
}

/** VirtualService full name → hosts of its own that it routes to by subset. */
function subsetRoutedHosts(ctx: AnalysisContext): Map<string, string[]> {
  const result = new Map<string, string[]>();
  for (const vs of ctx.list(K.VirtualService)) {
    const hosts = asStringArray(specOf(vs).hosts);
    for (const d of routeDestinations(vs).filter((d) => d.routeRule === "http")) {
      const host = asString(d.destination.host);
      if (asString(d.destination.subset) === "") continue;
      for (const h of hosts) if (h === host) result.set(fullName(vs), [...(result.get(fullName(vs)) ?? []), host]);
    }
  }
  return result;
}

function checkIngressSubsets(ctx: AnalysisContext, vs: Resource, subsetRouted: Map<string, string[]>): void {
  if (asArray(specOf(vs).gateways).length === 0) return;
  for (const d of routeDestinations(vs).filter((d) => d.routeRule === "http")) {
    if (asString(d.destination.subset) !== "") continue;
    const host = asString(d.destination.host);
    // Istio looks this message's line up under the rule's name where the other messages use "http".
    const ruleName = asString(asRecord(asArray(specOf(vs).http)[d.ruleIndex]).name);
    const at = d.hostField.replace("{.spec.http[", `{.spec.${ruleName}[`);
    for (const [other, hosts] of subsetRouted) {
      for (const h of hosts) {
        if (h === host)
          ctx.report(atField(newMessage(MESSAGES.IngressRouteRulesNotAffected, vs, other, fullName(vs)), at));
      }
    }
  }
}
