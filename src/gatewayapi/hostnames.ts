// Hostname lists of Gateway API objects, matched by Istio's rules (src/util/hosts.ts), as Istio's
// conversion matches them (pkg/config/host).
import { hostSubsetOf } from "../util/index.ts";

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
