// The destinations of a VirtualService as Istio's analyzers walk them (virtualservice/util.go): route
// destinations of tcp, tls and http rules in that order, and http mirror destinations, each with the
// field path istioctl reports it at.
import { asArray, asRecord, type Resource, specOf } from "./resource.ts";

export interface AnnotatedDestination {
  routeRule: "tcp" | "tls" | "http" | "http.mirror" | "http.mirrors";
  /** Index of the rule in its list. */
  ruleIndex: number;
  destination: Record<string, unknown>;
  /** Istio's field path of the destination's host (mirrors: as Istio writes it, without `.destination`). */
  hostField: string;
}

export function routeDestinations(vs: Resource): AnnotatedDestination[] {
  const spec = specOf(vs);
  return (["tcp", "tls", "http"] as const).flatMap((routeRule) =>
    asArray(spec[routeRule]).flatMap((rule, i) =>
      asArray(asRecord(rule).route).map((route, j) => ({
        routeRule,
        ruleIndex: i,
        destination: asRecord(asRecord(route).destination),
        hostField: `{.spec.${routeRule}[${i}].route[${j}].destination.host}`,
      })),
    ),
  );
}

export function mirrorDestinations(vs: Resource): AnnotatedDestination[] {
  return asArray(specOf(vs).http).flatMap((value, i) => {
    const rule = asRecord(value);
    const mirror: AnnotatedDestination[] =
      rule.mirror === undefined || rule.mirror === null
        ? []
        : [
            {
              routeRule: "http.mirror",
              ruleIndex: i,
              destination: asRecord(rule.mirror),
              hostField: `{.spec.http[${i}].mirror.host}`,
            },
          ];
    const mirrors = asArray(rule.mirrors).map(
      (m, j): AnnotatedDestination => ({
        routeRule: "http.mirrors",
        ruleIndex: i,
        destination: asRecord(asRecord(m).destination),
        hostField: `{.spec.http[${i}].mirrors[${j}].host}`,
      }),
    );
    return [...mirror, ...mirrors];
  });
}
