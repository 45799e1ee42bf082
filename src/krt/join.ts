import type { Collection, CollectionOptions, Event, Unregister } from "./collection.ts";
import { latest } from "./collection.ts";
import { ComputedCollection } from "./computed.ts";
import { settle } from "./scheduler.ts";

export interface JoinOptions<T> extends CollectionOptions<T> {
  /** Combines the objects the inputs hold under one key (in input order). Without it, the first input wins. */
  merge?(items: readonly T[]): T | undefined;
}

/**
 * The union of several collections of the same kind of object, one object per key. The inputs must key
 * objects alike. Inputs can be added and removed later (a remote cluster's registry coming and going).
 */
export class JoinCollection<T> extends ComputedCollection<T> {
  private readonly inputs: Collection<T>[] = [];
  private readonly unregisters = new Map<Collection<T>, Unregister>();

  constructor(
    inputs: readonly Collection<T>[],
    private readonly joinOptions: JoinOptions<T> = {},
  ) {
    const first = inputs[0];
    // Objects keep the keys their inputs gave them.
    const keyOf = joinOptions.keyOf ?? (first ? (item: T) => first.keyOf(item) : undefined);
    super("join", { ...joinOptions, keyOf });
    for (const input of inputs) this.add(input);
  }

  /** Adds an input after the others; its objects join (where no earlier input holds their keys) before this returns. */
  add(input: Collection<T>): void {
    if (this.unregisters.has(input)) return;
    this.inputs.push(input);
    const unregister = input.registerBatch((events) => {
      for (const event of events) this.markPending(input.keyOf(latest(event)));
    }, true);
    this.unregisters.set(input, unregister);
    settle();
  }

  /** Removes an input; its objects leave (or the next input's object under their keys shows) before this returns. */
  remove(input: Collection<T>): void {
    const unregister = this.unregisters.get(input);
    if (!unregister) return;
    unregister();
    this.unregisters.delete(input);
    this.inputs.splice(this.inputs.indexOf(input), 1);
    for (const item of input.list()) this.markPending(input.keyOf(item));
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

/**
 * Union of `inputs`: for a key held by several, the first input's object, or `merge` of all of them.
 * The JoinCollection it returns takes more inputs (`add`) and lets them go (`remove`).
 */
export function join<T>(inputs: readonly Collection<T>[], options?: JoinOptions<T>): JoinCollection<T> {
  return new JoinCollection(inputs, options);
}
