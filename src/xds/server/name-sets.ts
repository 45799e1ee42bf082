// The proxies of a namespace, or of a whole unscoped mesh, watch the same names in the same order (a
// scoped sidecar's EDS watch names ~200 clusters, an unscoped one's 1,000: a set of ~40 KiB). Every
// watch naming the same ones holds one shared set, so the names cost one set however many proxies
// watch them, and what is derived from a set (the EDS generator's names by host) is built once.

/** Watched-name sets by their names in order; a set no watch holds any more is forgotten. */
const sets = new Map<string, WeakRef<ReadonlySet<string>>>();
const forget = new FinalizationRegistry<string>((key) => {
  // The key may name a newer set by now.
  if (sets.get(key)?.deref() === undefined) sets.delete(key);
});

/**
 * The set of these names in this order that a watch already holds, or `names` itself, kept for the
 * next. The set must not change afterwards: a watch replaces its set, never edits it.
 */
export function sharedNameSet(names: ReadonlySet<string>): ReadonlySet<string> {
  if (names.size === 0) return names;
  const key = JSON.stringify([...names]);
  const held = sets.get(key)?.deref();
  if (held) return held;
  sets.set(key, new WeakRef(names));
  forget.register(names, key);
  return names;
}
