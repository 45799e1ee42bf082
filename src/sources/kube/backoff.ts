// Exponential backoff with jitter for retrying a failing list or watch: each failure doubles the
// delay up to a cap, and a random part keeps many informers from retrying in lockstep.

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

export class Backoff {
  private failures = 0;

  constructor(private readonly options: BackoffOptions) {}

  /** The delay before the next retry: between half and all of min(initial * 2^failures, max). */
  next(): number {
    const ceiling = Math.min(this.options.maxMs, this.options.initialMs * 2 ** this.failures);
    this.failures++;
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  /** After a success: the next failure waits the initial delay again. */
  reset(): void {
    this.failures = 0;
  }
}
