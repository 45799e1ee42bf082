// The local trust domain and its aliases (Istio's trustdomain.Bundle): source principals written
// for one of them, or for "cluster.local", are matched under every one of them.

/** [trustDomain, ...aliases]; empty when no trust domain is configured. */
export type TrustDomainBundle = readonly string[];

export function trustDomainBundle(trustDomain: string, aliases: readonly string[] = []): TrustDomainBundle {
  return [trustDomain, ...aliases];
}

// "cluster.local" in a policy stands for the local trust domain and its aliases.
const CLUSTER_LOCAL = "cluster.local";

/**
 * Principals `<td>/ns/<ns>/sa/<sa>` whose trust domain is in the bundle (patterns allowed on
 * either side) or is "cluster.local" are rewritten once per bundle trust domain; others are kept.
 */
export function replaceTrustDomainAliases(bundle: TrustDomainBundle, principals: readonly string[]): string[] {
  return principals.flatMap((principal) => {
    const parts = principal.split("/");
    // Not a SPIFFE identity, or `*` as trust domain: the trust domain is not checked.
    if (parts.length !== 5 || parts[0] === "*") return [principal];
    const trustDomain = parts[0];
    if (trustDomain !== CLUSTER_LOCAL && !bundle.some((td) => patternsMatch(trustDomain, td))) return [principal];
    const replaced: string[] = [];
    for (const td of bundle) {
      // A principal written with a `*suffix` trust domain that covers `td` stays as written (once).
      const next = suffixMatch(td, trustDomain) ? principal : [td, ...parts.slice(1)].join("/");
      if (!replaced.includes(next)) replaced.push(next);
    }
    return replaced;
  });
}

/** Trust domain values naming a bundle member stand for the whole bundle; duplicates dropped. */
export function expandTrustDomainAliases(bundle: TrustDomainBundle, values: readonly string[]): string[] {
  const expanded = values.flatMap((value) => (bundle.includes(value) ? bundle : [value]));
  return [...new Set(expanded)];
}

function patternsMatch(a: string, b: string): boolean {
  return a === b || b === "*" || prefixMatch(a, b) || prefixMatch(b, a) || suffixMatch(a, b) || suffixMatch(b, a);
}

function prefixMatch(s: string, pattern: string): boolean {
  return pattern.endsWith("*") && s.startsWith(pattern.slice(0, -1));
}

function suffixMatch(s: string, pattern: string): boolean {
  return pattern.startsWith("*") && s.endsWith(pattern.slice(1));
}
