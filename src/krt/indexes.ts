import type { Collection, Event } from "./collection.ts";

/**
 * A secondary index over a collection: each object is filed under the keys `extract` returns.
 * The collection updates its indexes before it tells any handler about a change, so a lookup made
 * while reacting to an event already sees that event.
 */
export class Index<T> {
  private readonly buckets = new Map<string, Map<string, T>>();
  // Held behind a method so an Index<T> can be stored where an Index<unknown> is expected.
  private readonly extractor: { keysOf(item: T): readonly string[] };

  constructor(
    readonly name: string,
    readonly collection: Collection<T>,
    extract: (item: T) => readonly string[],
  ) {
    this.extractor = { keysOf: extract };
  }

  extract(item: T): readonly string[] {
    return this.extractor.keysOf(item);
  }

  lookup(key: string): T[] {
    const bucket = this.buckets.get(key);
    return bucket ? [...bucket.values()] : [];
  }

  /** Index keys currently holding at least one object. */
  keys(): string[] {
    return [...this.buckets.keys()];
  }

  has(item: T, key: string): boolean {
    return this.extract(item).includes(key);
  }

  /** Called by the owning collection for every change, before handlers run. */
  apply(event: Event<T>): void {
    const objectKey = this.collection.keyOf(event.type === "delete" ? event.old : event.new);
    const newKeys = event.new === undefined ? [] : this.extract(event.new);
    if (event.old !== undefined) {
      for (const key of this.extract(event.old)) {
        if (newKeys.includes(key)) continue;
        const bucket = this.buckets.get(key);
        bucket?.delete(objectKey);
        if (bucket?.size === 0) this.buckets.delete(key);
      }
    }
    if (event.new === undefined) return;
    for (const key of newKeys) {
      let bucket = this.buckets.get(key);
      if (!bucket) {
        bucket = new Map();
        this.buckets.set(key, bucket);
      }
      // An object that stays under a key keeps its place in the bucket.
      bucket.set(objectKey, event.new);
    }
  }
}

/** Index `collection` by the keys `extract` returns for each object (zero, one or many). */
export function index<T>(
  collection: Collection<T>,
  extract: (item: T) => readonly string[],
  name = `${collection.name}/index`,
): Index<T> {
  return collection.addIndex(name, extract);
}
