import type { Collection, Index } from "./collection.ts";
import type { Labels } from "./traits.ts";
import { labelsContain } from "./traits.ts";

/** Which objects of a collection a fetch wants. Every field given must hold. */
export interface FetchFilter<T> {
  /** Object key(s), as the collection's keyOf gives them. */
  key?: string | readonly string[];
  namespace?: string;
  /** The object's labels contain all of these. */
  labels?: Labels;
  /** The object's selector selects workloads with these labels; an absent or empty selector selects all. */
  selects?: Labels;
  /** Like `selects`, but an absent or empty selector selects nothing. */
  selectsNonEmpty?: Labels;
  /** Anything else. A fetch with only this is checked against every change of the collection. */
  where?(item: T): boolean;
}

/**
 * Where a fetch's candidates come from, and so where a change to the fetched collection is routed:
 * by object key, by one index key (fetchIndex, or the namespace index), or by checking every change.
 */
export type Bucket<T> =
  | { readonly kind: "keys"; readonly keys: readonly string[] }
  | { readonly kind: "index"; readonly index: Index<T>; readonly key: string }
  | { readonly kind: "all" };

/** One recorded fetch: the collection, its bucket and the full filter its results passed. */
export class Dependency<T> {
  constructor(
    readonly collection: Collection<T>,
    readonly bucket: Bucket<T>,
    private readonly filter: FetchFilter<T>,
  ) {}

  /** Would this fetch return `item` (the object as it was or as it is now)? */
  matches(item: T): boolean {
    const { bucket, filter, collection } = this;
    if (bucket.kind === "keys" && !bucket.keys.includes(collection.keyOf(item))) return false;
    if (bucket.kind === "index" && !bucket.index.has(item, bucket.key)) return false;
    if (filter.namespace !== undefined && collection.namespaceOf(item) !== filter.namespace) return false;
    if (filter.labels && !labelsContain(collection.labelsOf(item), filter.labels)) return false;
    if (filter.selects && !labelsContain(filter.selects, collection.selectorOf(item) ?? {})) return false;
    if (filter.selectsNonEmpty) {
      const selector = collection.selectorOf(item);
      if (!selector || Object.keys(selector).length === 0) return false;
      if (!labelsContain(filter.selectsNonEmpty, selector)) return false;
    }
    return filter.where ? filter.where(item) : true;
  }

  results(): T[] {
    const { bucket, collection } = this;
    let candidates: T[];
    if (bucket.kind === "keys") {
      candidates = [];
      for (const key of bucket.keys) {
        const item = collection.get(key);
        if (item !== undefined) candidates.push(item);
      }
    } else if (bucket.kind === "index") {
      candidates = bucket.index.lookup(bucket.key);
    } else {
      candidates = collection.list();
    }
    return candidates.filter((item) => this.matches(item));
  }
}

function bucketFor<T>(collection: Collection<T>, filter: FetchFilter<T>): Bucket<T> {
  if (filter.key !== undefined)
    return { kind: "keys", keys: typeof filter.key === "string" ? [filter.key] : filter.key };
  if (filter.namespace !== undefined)
    return { kind: "index", index: collection.namespaceIndex(), key: filter.namespace };
  return { kind: "all" };
}

/**
 * Handed to every transform. Reading another collection through it records a dependency, so the
 * transform reruns when, and only when, an object its fetch could return changes.
 */
export class FetchContext {
  private readonly recorded: Dependency<unknown>[] = [];

  get dependencies(): readonly Dependency<unknown>[] {
    return this.recorded;
  }

  fetch<T>(collection: Collection<T>, filter: FetchFilter<T> = {}): T[] {
    return this.record(new Dependency(collection, bucketFor(collection, filter), filter));
  }

  /** The single match, or undefined. More than one match is a bug in the caller's filter. */
  fetchOne<T>(collection: Collection<T>, filter: FetchFilter<T> = {}): T | undefined {
    const found = this.fetch(collection, filter);
    if (found.length > 1) {
      throw new Error(`krt: fetchOne on ${collection.name} matched ${found.length} objects`);
    }
    return found[0];
  }

  fetchIndex<T>(index: Index<T>, key: string, filter: FetchFilter<T> = {}): T[] {
    return this.record(new Dependency(index.collection, { kind: "index", index, key }, filter));
  }

  private record<T>(dependency: Dependency<T>): T[] {
    this.recorded.push(dependency);
    return dependency.results();
  }
}
