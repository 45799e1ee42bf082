// The destinations of a VirtualService as Istio's analyzers walk them (virtualservice/util.go): route
// destinations of tcp, tls and http rules in that order, and http mirror destinations.
import { asArray, asRecord, type Resource, specOf } from "./resource.ts";

export interface AnnotatedDestination {
  routeRule: "tcp" | "tls" | "http" | "http.mirror" | "http.mirrors";
  destination: Record<string, unknown>;
}

export function routeDestinations(vs: Resource): AnnotatedDestination[] {
  const spec = specOf(vs);
  return (["tcp", "tls", "http"] as const).flatMap((routeRule) =>
    asArray(spec[routeRule]).flatMap((rule) =>
      asArray(asRecord(rule).route).map((route) => ({ routeRule, destination: asRecord(asRecord(route).destination) })),
    ),
  );
}

export function mirrorDestinations(vs: Resource): AnnotatedDestination[] {
  return asArray(specOf(vs).http).flatMap((value) => {
    const rule = asRecord(value);
    const mirror: AnnotatedDestination[] =
      rule.mirror === undefined || rule.mirror === null
        ? []
        : [{ routeRule: "http.mirror", destination: asRecord(rule.mirror) }];
    const mirrors = asArray(rule.mirrors).map(
      (m): AnnotatedDestination => ({ routeRule: "http.mirrors", destination: asRecord(asRecord(m).destination) }),
    );
    return [...mirror, ...mirrors];
  });
}
