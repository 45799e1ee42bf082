// Runs waiting recomputes in creation order. A collection can only fetch collections that exist
// when its transform runs, so those were (almost always) created before it: recomputing in creation
// order lets every upstream settle first, and a collection fed by several paths from one change
// (a diamond) recomputes once, from consistent inputs, instead of once per path with a stale half.

/** A collection with recomputes waiting. `order` is its creation order. */
export interface PendingWork {
  readonly order: number;
  runPending(): void;
}

const waiting = new Set<PendingWork>();
/** Nonzero while recomputes are running or a batch() is open; work is then left to the outer call. */
let holds = 0;

export function schedule(work: PendingWork): void {
  waiting.add(work);
}

/** Runs every waiting recompute, including those they cause, before returning. */
export function settle(): void {
  if (holds > 0) return;
  holds += 1;
  // As in delivery: one failing recompute (a throwing handler downstream) does not stop the rest.
  let failure: { error: unknown } | undefined;
  try {
    while (waiting.size > 0) {
      let next: PendingWork | undefined;
      for (const work of waiting) {
        if (!next || work.order < next.order) next = work;
      }
      if (!next) break;
      waiting.delete(next);
      try {
        next.runPending();
      } catch (error) {
        failure ??= { error };
      }
    }
  } finally {
    holds -= 1;
  }
  if (failure) throw failure.error;
}

/**
 * Applies several source updates as one change: derived collections recompute once, after `apply`
 * returns, and see all of the updates (a config file touching several kinds, for instance).
 */
export function batch<R>(apply: () => R): R {
  holds += 1;
  try {
    return apply();
  } finally {
    holds -= 1;
    settle();
  }
}
