import { Collection } from "./collection.ts";
import type { PendingWork } from "./scheduler.ts";
import { schedule } from "./scheduler.ts";

/**
 * A collection computed from others (derived, join). When told about a change it only notes which
 * of its keys to recompute; the scheduler later calls runPending, after everything it reads settled.
 */
export abstract class ComputedCollection<T> extends Collection<T> implements PendingWork {
  private pending = new Set<string>();

  protected markPending(key: string): void {
    this.pending.add(key);
    schedule(this);
  }

  protected isPending(key: string): boolean {
    return this.pending.has(key);
  }

  /** Called by the scheduler. */
  runPending(): void {
    const keys = this.pending;
    this.pending = new Set();
    this.recompute(keys);
  }

  protected abstract recompute(keys: ReadonlySet<string>): void;
}
