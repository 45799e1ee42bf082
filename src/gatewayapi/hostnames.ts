// Istio's hostname matching (pkg/config/host): "*"-prefixed wildcards, matched in either direction.

function isWildcard(name: string): boolean {
  return name.startsWith("*");
}

/** Whether two hostnames can match the same request (either may be a wildcard). */
export function hostsMatch(a: string, b: string): boolean {
  if (isWildcard(a)) {
    if (isWildcard(b)) return a.length < b.length ? b.slice(1).endsWith(a.slice(1)) : a.slice(1).endsWith(b.slice(1));
    return b.endsWith(a.slice(1));
  }
  if (isWildcard(b)) return a.endsWith(b.slice(1));
  return a === b;
}

/** Whether every host `a` matches is also matched by `b`. */
export function hostSubsetOf(a: string, b: string): boolean {
  if (isWildcard(a)) return isWildcard(b) && a.slice(1).endsWith(b.slice(1));
  if (isWildcard(b)) return a.endsWith(b.slice(1));
  return a === b;
}

/** The hosts both lists match, the narrower of each matching pair, without repeats. */
export function intersectHosts(a: readonly string[], b: readonly string[]): string[] {
  const result: string[] = [];
  for (const x of a) {
    for (const y of b) {
      const narrower = hostSubsetOf(x, y) ? x : hostSubsetOf(y, x) ? y : undefined;
      if (narrower !== undefined && !result.includes(narrower)) result.push(narrower);
    }
  }
  return result;
}
