import type { CollectionOptions, Event } from "./collection.ts";
import { Collection } from "./collection.ts";

/** A collection fed from outside (a config source, a test): the inputs of every derived collection. */
export class StaticCollection<T> extends Collection<T> {
  constructor(initial: readonly T[] = [], options: CollectionOptions<T> = {}) {
    super("static", options);
    this.update({ upsert: initial });
  }

  /**
   * Applies upserts and deletes as one batch: handlers and derived collections see them together.
   * When a key is both upserted and deleted, the delete wins; among upserts of one key, the last wins.
   * Upserting an object equal to the current one is no change.
   */
  update(changes: { upsert?: readonly T[]; delete?: readonly string[] }): void {
    const next = new Map<string, T | undefined>();
    for (const item of changes.upsert ?? []) next.set(this.keyOf(item), item);
    for (const key of changes.delete ?? []) next.set(key, undefined);
    this.commitDesired(next);
  }

  upsert(...items: T[]): void {
    this.update({ upsert: items });
  }

  delete(...keys: string[]): void {
    this.update({ delete: keys });
  }

  /** Replaces the whole content: absent keys are deleted, the rest upserted, all in one batch. */
  reset(items: readonly T[]): void {
    const next = new Map<string, T | undefined>();
    for (const item of this.list()) next.set(this.keyOf(item), undefined);
    for (const item of items) next.set(this.keyOf(item), item);
    this.commitDesired(next);
  }

  protected dependencyNames(): string[] {
    return [];
  }

  private commitDesired(next: ReadonlyMap<string, T | undefined>): void {
    const events: Event<T>[] = [];
    for (const [key, value] of next) {
      const event = this.diff(key, value);
      if (event) events.push(event);
    }
    this.commit(events);
  }
}
