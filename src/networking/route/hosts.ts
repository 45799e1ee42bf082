// Host names as Istio compares them (pkg/config/host.Name): `*` and `*.suffix` wildcards.

export function isWildcard(host: string): boolean {
  return host.startsWith("*");
}

/** Istio's host.Name.Matches: equal, or one is a wildcard covering the other. */
export function hostMatches(a: string, b: string): boolean {
  if (a === b) return true;
  const aw = isWildcard(a);
  const bw = isWildcard(b);
  if (aw && bw) {
    const as = a.slice(1);
    const bs = b.slice(1);
    return as.length > bs.length ? as.endsWith(bs) : bs.endsWith(as);
  }
  if (aw) return b.endsWith(a.slice(1));
  if (bw) return a.endsWith(b.slice(1));
  return false;
}

/** The most specific (longest) wildcard among `wildcards` matching `host`, or undefined. */
export function mostSpecificWildcard(host: string, wildcards: Iterable<string>): string | undefined {
  let best: string | undefined;
  for (const w of wildcards) {
    if (hostMatches(w, host) && (best === undefined || w.length > best.length)) best = w;
  }
  return best;
}
