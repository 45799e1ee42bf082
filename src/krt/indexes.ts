// `index`, the function that indexes a collection; the Index it returns lives with Collection
// (collection.ts), which creates and updates its indexes.
import type { Collection, Index } from "./collection.ts";

/** Index `collection` by the keys `extract` returns for each object (zero, one or many). */
export function index<T>(
  collection: Collection<T>,
  extract: (item: T) => readonly string[],
  name = `${collection.name}/index`,
): Index<T> {
  return collection.addIndex(name, extract);
}
