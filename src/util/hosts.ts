// Istio's host name matching (pkg/config/host Name): a name starting with `*` is a wildcard covering
// every name that ends with the rest, so `*.example.com` covers `a.example.com` and `*.b.example.com`,
// and `*` alone covers every name. Config validation, the Gateway API conversion, the model and the
// builders all match hosts by these rules.

/** The name is a wildcard: it starts with `*`. */
export function isWildcard(host: string): boolean {
  return host.startsWith("*");
}

/** Istio's Name.SubsetOf: `host` is covered by `other`, equal or under the wildcard `other`. */
export function hostSubsetOf(host: string, other: string): boolean {
  if (isWildcard(host)) return isWildcard(other) && host.slice(1).endsWith(other.slice(1));
  if (isWildcard(other)) return host.endsWith(other.slice(1));
  return host === other;
}

/** Istio's Name.Matches: the two names overlap, either covering the other (symmetric). */
export function hostsMatch(a: string, b: string): boolean {
  if (isWildcard(a) && isWildcard(b)) {
    return a.length < b.length ? b.slice(1).endsWith(a.slice(1)) : a.slice(1).endsWith(b.slice(1));
  }
  if (isWildcard(a)) return b.endsWith(a.slice(1));
  if (isWildcard(b)) return a.endsWith(b.slice(1));
  return a === b;
}
