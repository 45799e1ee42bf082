// The controllers' work queue (Istio's controllers.Queue): keys to reconcile one at a time, each key
// queued once however often it changes meanwhile, a failed one tried again after a growing delay (as
// a rate-limited workqueue), up to a number of attempts or for ever.

export interface WorkQueueOptions {
  /** Reconciles one key; resolving false or throwing means it should be tried again. */
  reconcile: (key: string) => Promise<boolean>;
  /** The delay before the retry numbered `retry` (from 0). */
  retryDelayMs: (retry: number) => number;
  /** Attempts of one change before the key waits for its next change; default no limit. */
  maxAttempts?: number;
  /** Told of every failed attempt (`err` undefined when reconcile resolved false), and whether it was the last. */
  onFailure?: (key: string, err: unknown, last: boolean) => void;
}

export class WorkQueue {
  readonly #options: WorkQueueOptions;
  /** Keys waiting, with the attempt each is at. */
  readonly #queue = new Map<string, number>();
  readonly #retries = new Set<ReturnType<typeof setTimeout>>();
  #working = false;
  #stopped = false;
  #idle: (() => void)[] = [];

  constructor(options: WorkQueueOptions) {
    this.#options = options;
  }

  /** Queues `key` for a change (its first attempt). */
  add(key: string): void {
    this.#enqueue(key, 0);
  }

  stop(): void {
    this.#stopped = true;
    for (const retry of this.#retries) clearTimeout(retry);
    this.#queue.clear();
  }

  /** Resolves once nothing is queued or being reconciled (retries waiting on their delay aside). */
  settled(): Promise<void> {
    if (!this.#working && this.#queue.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #enqueue(key: string, attempt: number): void {
    if (this.#stopped) return;
    // A key already waiting keeps its place; a retry takes over its attempt count.
    if (!this.#queue.has(key) || attempt > 0) this.#queue.set(key, attempt);
    if (!this.#working) void this.#work();
  }

  async #work(): Promise<void> {
    this.#working = true;
    while (!this.#stopped && this.#queue.size > 0) {
      const [key, attempt] = this.#queue.entries().next().value as [string, number];
      this.#queue.delete(key);
      let done = false;
      let error: unknown;
      try {
        done = await this.#options.reconcile(key);
      } catch (err) {
        error = err;
      }
      if (done) continue;
      const last = attempt + 1 >= (this.#options.maxAttempts ?? Number.POSITIVE_INFINITY);
      this.#options.onFailure?.(key, error, last);
      if (last) continue;
      const timer = setTimeout(() => {
        this.#retries.delete(timer);
        this.#enqueue(key, attempt + 1);
      }, this.#options.retryDelayMs(attempt));
      timer.unref();
      this.#retries.add(timer);
    }
    this.#working = false;
    for (const resolve of this.#idle.splice(0)) resolve();
  }
}

/**
 * A queue as Istio's controllers make theirs (controllers.NewQueue with WithMaxAttempts): `reconcile`
 * throws to be tried again, 5 ms doubling between attempts, at most `maxAttempts` per change; `giveUp`
 * is told of the last failure.
 */
export function controllerQueue(
  reconcile: (key: string) => Promise<void>,
  maxAttempts: number,
  giveUp: (key: string, err: unknown) => void,
): WorkQueue {
  return new WorkQueue({
    reconcile: async (key) => {
      await reconcile(key);
      return true;
    },
    retryDelayMs: (retry) => 5 * 2 ** retry,
    maxAttempts,
    onFailure: (key, err, last) => {
      if (last) giveUp(key, err);
    },
  });
}
