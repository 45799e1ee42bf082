import type { Collection, CollectionOptions, Event, Unregister } from "./collection.ts";
import { DerivedCollection } from "./derived.ts";
import type { FetchContext } from "./fetch.ts";
import { StaticCollection } from "./static.ts";

const SINGLETON_KEY = "singleton";

export type SingletonOptions<T> = Omit<CollectionOptions<T>, "keyOf">;

/** A collection of at most one object, read with `get()`. Fetch it through `asCollection()`. */
export class Singleton<T> {
  constructor(private readonly collection: Collection<T>) {}

  get(): T | undefined {
    return this.collection.get(SINGLETON_KEY);
  }

  register(handler: (event: Event<T>) => void): Unregister {
    return this.collection.register(handler);
  }

  asCollection(): Collection<T> {
    return this.collection;
  }
}

/** A singleton set from outside (MeshConfig, for instance). */
export class StaticSingleton<T> extends Singleton<T> {
  private readonly store: StaticCollection<T>;

  constructor(initial: T | undefined, options: SingletonOptions<T> = {}) {
    const store = new StaticCollection<T>(initial === undefined ? [] : [initial], {
      ...options,
      keyOf: () => SINGLETON_KEY,
    });
    super(store);
    this.store = store;
  }

  /** Replaces the value; undefined removes it. An equal value is no change. */
  set(value: T | undefined): void {
    if (value === undefined) this.store.delete(SINGLETON_KEY);
    else this.store.upsert(value);
  }
}

/** A value computed from other collections (through ctx), recomputed when what it fetched changes. */
export function singleton<T>(
  compute: (ctx: FetchContext) => T | undefined,
  options: SingletonOptions<T> = {},
): Singleton<T> {
  // The derived collection needs an input; this one has a single object that never changes.
  const trigger = new StaticCollection<string>([SINGLETON_KEY], {
    name: options.name === undefined ? undefined : `${options.name}/trigger`,
  });
  const derived = new DerivedCollection<string, T>(
    trigger,
    (ctx) => {
      const value = compute(ctx);
      return value === undefined ? [] : [value];
    },
    { ...options, keyOf: () => SINGLETON_KEY },
  );
  return new Singleton(derived);
}

export function staticSingleton<T>(initial?: T, options?: SingletonOptions<T>): StaticSingleton<T> {
  return new StaticSingleton(initial, options);
}
