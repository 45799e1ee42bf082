import type { Collection, CollectionOptions, Event } from "./collection.ts";
import { latest } from "./collection.ts";
import { ComputedCollection } from "./computed.ts";
import { settle } from "./scheduler.ts";

export interface JoinOptions<T> extends CollectionOptions<T> {
  /** Combines the objects the inputs hold under one key (in input order). Without it, the first input wins. */
  merge?(items: readonly T[]): T | undefined;
}

/** The union of several collections of the same kind of object, one object per key. The inputs must key objects alike. */
export class JoinCollection<T> extends ComputedCollection<T> {
  constructor(
    private readonly inputs: readonly Collection<T>[],
    private readonly joinOptions: JoinOptions<T> = {},
  ) {
    const first = inputs[0];
    // Objects keep the keys their inputs gave them.
    const keyOf = joinOptions.keyOf ?? (first ? (item: T) => first.keyOf(item) : undefined);
    super("join", { ...joinOptions, keyOf });
    for (const input of inputs) {
      input.registerBatch((events) => {
        for (const event of events) this.markPending(input.keyOf(latest(event)));
      }, true);
    }
    settle();
  }

  protected dependencyNames(): string[] {
    return this.inputs.map((c) => c.name);
  }

  protected recompute(keys: ReadonlySet<string>): void {
    const changes: Event<T>[] = [];
    for (const key of keys) {
      const present: T[] = [];
      for (const input of this.inputs) {
        const item = input.get(key);
        if (item !== undefined) present.push(item);
      }
      this.recomputes += 1;
      let joined: T | undefined;
      try {
        joined = this.joinOptions.merge && present.length > 0 ? this.joinOptions.merge(present) : present[0];
      } catch (error) {
        this.recordError(key, error);
        continue;
      }
      const event = this.diff(key, joined);
      if (event) changes.push(event);
    }
    this.commit(changes);
  }
}

/** Union of `inputs`: for a key held by several, the first input's object, or `merge` of all of them. */
export function join<T>(inputs: readonly Collection<T>[], options?: JoinOptions<T>): Collection<T> {
  return new JoinCollection(inputs, options);
}
