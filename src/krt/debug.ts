// What /debug/krtz shows about each collection.

export interface CollectionDebug {
  name: string;
  size: number;
  /** Names of the collections this one reads: its input(s) and everything its transforms fetched. */
  dependencies: string[];
  /** Times a transform (or a join's per-key merge) ran. Static collections never recompute. */
  recomputes: number;
  /** Transforms (or merges) that threw; the object kept its last good output. */
  errors: number;
  lastError?: string;
  handlers: number;
  indexes: string[];
  /** The objects themselves, when asked for. */
  items?: unknown[];
}

interface Debuggable {
  debug(): CollectionDebug;
  list(): unknown[];
}

/** Collections given this registry in their options list themselves here, in creation order. */
export class DebugRegistry {
  private readonly collections: Debuggable[] = [];

  add(collection: Debuggable): void {
    this.collections.push(collection);
  }

  snapshot(options: { items?: boolean } = {}): CollectionDebug[] {
    return this.collections.map((c) => (options.items ? { ...c.debug(), items: c.list() } : c.debug()));
  }
}
