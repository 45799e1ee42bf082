// Caches living as long as one push context (Istio's XDS cache, scoped to a push): a resource is
// built once per key, then the same object goes to every proxy of the push (the encoder encodes
// each object once). Every cache registers in `xdsCaches`, which /debug/cachez lists and clears.
import type { PushContext } from "../../model/index.ts";
import { encodeResource } from "../encode.ts";
import type { XdsResource } from "../generator.ts";

/** One cached resource, as /debug/cachez shows it. */
export interface CacheEntry {
  typeUrl: string;
  name: string;
  resource: XdsResource["resource"];
  /** Its encoded size. */
  bytes(): number;
}

export interface XdsCaches {
  /** The resources cached for the latest push each cache served. */
  entries(): CacheEntry[];
  /** Empties those caches; the next request rebuilds. */
  clear(): void;
}

interface RegisteredCache {
  entries(): CacheEntry[];
  clear(): void;
}

const registered: RegisteredCache[] = [];

/** Every per-push cache of the process. */
export const xdsCaches: XdsCaches = {
  entries: () => registered.flatMap((c) => c.entries()),
  clear: () => {
    for (const c of registered) c.clear();
  },
};

/**
 * A per-push cache of `typeUrl` resources; `resources` says which resources a cached value holds
 * (a value may hold several, or none).
 */
export function perPush<T>(
  typeUrl: string,
  resources: (value: T) => readonly XdsResource[],
): (push: PushContext, key: string, build: () => T) => T {
  const byPush = new WeakMap<PushContext, Map<string, T>>();
  // The latest push's map, for the debug listing (a WeakMap cannot be listed).
  let latest: { push: PushContext; values: Map<string, T> } | undefined;
  registered.push({
    entries: () =>
      [...(latest?.values.values() ?? [])].flatMap((value) =>
        resources(value).map((r) => ({
          typeUrl,
          name: r.name,
          resource: r.resource,
          bytes: () => encodeResource(r).any.length,
        })),
      ),
    clear: () => latest?.values.clear(),
  });
  return (push, key, build) => {
    let cache = byPush.get(push);
    if (!cache) {
      cache = new Map();
      byPush.set(push, cache);
    }
    if (!latest || push.createdAt >= latest.push.createdAt) latest = { push, values: cache };
    let value = cache.get(key);
    if (value === undefined) {
      value = build();
      cache.set(key, value);
    }
    return value;
  };
}
