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
}

interface Debuggable {
  debug(): CollectionDebug;
}

/** Collections given this registry in their options list themselves here, in creation order. */
export class DebugRegistry {
  private readonly collections: Debuggable[] = [];

  add(collection: Debuggable): void {
    this.collections.push(collection);
  }

  snapshot(): CollectionDebug[] {
    return this.collections.map((c) => c.debug());
  }
}
