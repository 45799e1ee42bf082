import type { CollectionDebug, DebugRegistry } from "./debug.ts";
import { deepEqual } from "./equal.ts";
import { settle } from "./scheduler.ts";
import type { Labels } from "./traits.ts";
import { defaultKeyOf, defaultLabelsOf, defaultNamespaceOf, defaultSelectorOf } from "./traits.ts";

export type Event<T> =
  | { readonly type: "add"; readonly old?: undefined; readonly new: T }
  | { readonly type: "update"; readonly old: T; readonly new: T }
  | { readonly type: "delete"; readonly old: T; readonly new?: undefined };

/** The object as it is after the event (the removed object for a delete). */
export function latest<T>(event: Event<T>): T {
  return event.type === "delete" ? event.old : event.new;
}

export type Unregister = () => void;

export interface CollectionOptions<T> {
  /** Shown in debug output; defaults to the kind of collection and a sequence number. */
  name?: string;
  keyOf?(item: T): string;
  /** Decides whether a new value is a change worth an event; defaults to structural deep equality. */
  equals?(a: T, b: T): boolean;
  /** Accessors used by fetch filters (namespace, labels, selects); see traits.ts for the defaults. */
  namespaceOf?(item: T): string | undefined;
  labelsOf?(item: T): Labels | undefined;
  selectorOf?(item: T): Labels | undefined;
  debug?: DebugRegistry;
}

interface Registration<T> {
  active: boolean;
  deliver(events: readonly Event<T>[]): void;
}

interface QueuedBatch<T> {
  events: readonly Event<T>[];
  /** Handlers registered when the change happened; later ones got the state through their replay. */
  targets: Registration<T>[];
}

let sequence = 0;

/**
 * A keyed set of immutable objects that tells its handlers about every change. Subclasses decide
 * what the objects are (StaticCollection: whatever is put in; derived collections: transform results)
 * and hand each batch of changes to `commit`, which updates the store and its indexes first and
 * then delivers the batch. Delivery is synchronous; a change made by a handler while a batch is
 * being delivered is queued behind it, so every handler sees batches in the order they happened.
 * Derived collections only note what to recompute when they are told; the recomputes run (see
 * scheduler.ts) before the outermost change returns.
 */
export abstract class Collection<T> {
  readonly name: string;
  /** Creation order, which is the order waiting recomputes run in (see scheduler.ts). */
  readonly order: number;
  private readonly options: CollectionOptions<T>;
  private readonly items = new Map<string, T>();
  private readonly indexes: Index<T>[] = [];
  private namespaces: Index<T> | undefined;
  private readonly registrations = new Set<Registration<T>>();
  private readonly queue: QueuedBatch<T>[] = [];
  private delivering = false;
  protected recomputes = 0;
  #generation = 0;
  private errors = 0;
  private lastError: string | undefined;

  constructor(kind: string, options: CollectionOptions<T>) {
    sequence += 1;
    this.order = sequence;
    this.name = options.name ?? `${kind}#${sequence}`;
    this.options = options;
    options.debug?.add(this);
  }

  keyOf(item: T): string {
    return this.options.keyOf ? this.options.keyOf(item) : defaultKeyOf(item);
  }

  namespaceOf(item: T): string | undefined {
    return this.options.namespaceOf ? this.options.namespaceOf(item) : defaultNamespaceOf(item);
  }

  labelsOf(item: T): Labels | undefined {
    return this.options.labelsOf ? this.options.labelsOf(item) : defaultLabelsOf(item);
  }

  selectorOf(item: T): Labels | undefined {
    return this.options.selectorOf ? this.options.selectorOf(item) : defaultSelectorOf(item);
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  /** All objects, in the order their keys first appeared. */
  list(): T[] {
    return [...this.items.values()];
  }

  get size(): number {
    return this.items.size;
  }

  /**
   * How many batches of changes the collection has applied: while it stays the same, so do the objects
   * (a reader can keep what it built from them).
   */
  get generation(): number {
    return this.#generation;
  }

  /** Calls `handler` for each event, starting with an `add` for every object already present. */
  register(handler: (event: Event<T>) => void): Unregister {
    return this.registerBatch((events) => {
      for (const event of events) handler(event);
    }, true);
  }

  /**
   * Calls `handler` once per batch of changes (one source update, one recompute pass). With
   * `runExistingState`, it first gets one batch of `add`s for the objects already present.
   */
  registerBatch(handler: (events: readonly Event<T>[]) => void, runExistingState = true): Unregister {
    const registration: Registration<T> = { active: true, deliver: handler };
    this.registrations.add(registration);
    if (runExistingState && this.items.size > 0) {
      handler(this.list().map((item): Event<T> => ({ type: "add", new: item })));
    }
    return () => {
      registration.active = false;
      this.registrations.delete(registration);
    };
  }

  /** Builds and maintains an index; prefer the `index()` function. */
  addIndex(name: string, extract: (item: T) => readonly string[]): Index<T> {
    const created = new Index(name, this, extract);
    for (const item of this.items.values()) created.apply({ type: "add", new: item });
    this.indexes.push(created);
    return created;
  }

  /** The index by namespace that `fetch(c, { namespace })` uses, built on first use. */
  namespaceIndex(): Index<T> {
    if (!this.namespaces) {
      this.namespaces = this.addIndex(`${this.name}/namespace`, (item) => {
        const namespace = this.namespaceOf(item);
        return namespace === undefined ? [] : [namespace];
      });
    }
    return this.namespaces;
  }

  debug(): CollectionDebug {
    return {
      name: this.name,
      size: this.items.size,
      dependencies: this.dependencyNames(),
      recomputes: this.recomputes,
      errors: this.errors,
      ...(this.lastError === undefined ? {} : { lastError: this.lastError }),
      handlers: this.registrations.size,
      indexes: this.indexes.map((i) => i.name),
    };
  }

  protected abstract dependencyNames(): string[];

  /** A throwing transform is a bug; it is counted and shown in debug output instead of breaking delivery. */
  protected recordError(inputKey: string, error: unknown): void {
    this.errors += 1;
    this.lastError = `${inputKey}: ${error instanceof Error ? error.message : String(error)}`;
  }

  /** The event that moving `key` to `next` (undefined: absent) would be, or undefined when nothing changes. */
  protected diff(key: string, next: T | undefined): Event<T> | undefined {
    const previous = this.items.get(key);
    if (previous === undefined) return next === undefined ? undefined : { type: "add", new: next };
    if (next === undefined) return { type: "delete", old: previous };
    const equal = this.options.equals ? this.options.equals(previous, next) : deepEqual(previous, next);
    return equal ? undefined : { type: "update", old: previous, new: next };
  }

  /** Applies a batch (at most one event per key, built with `diff`), delivers it, and settles what it caused. */
  protected commit(events: readonly Event<T>[]): void {
    if (events.length === 0) return;
    this.#generation += 1;
    for (const event of events) {
      if (event.type === "delete") this.items.delete(this.keyOf(event.old));
      else this.items.set(this.keyOf(event.new), event.new);
      for (const each of this.indexes) each.apply(event);
    }
    this.queue.push({ events, targets: [...this.registrations] });
    if (this.delivering) return;
    this.delivering = true;
    // A throwing handler must not starve the others (derived collections among them): everyone is
    // served and the graph settles, then the first error goes to whoever made the change.
    let failure: { error: unknown } | undefined;
    try {
      for (let batch = this.queue.shift(); batch; batch = this.queue.shift()) {
        for (const target of batch.targets) {
          if (!target.active) continue;
          try {
            target.deliver(batch.events);
          } catch (error) {
            failure ??= { error };
          }
        }
      }
    } finally {
      this.delivering = false;
    }
    settle();
    if (failure) throw failure.error;
  }
}

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
