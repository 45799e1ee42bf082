// A clock for tests of debounced code: time moves only when the test advances it.
import type { Clock } from "../../src/xds/pipeline/index.ts";

/** A clock whose time moves only when the test says so. */
export class FakeClock implements Clock {
  #now = 0;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #next = 0;

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): unknown {
    this.#next++;
    this.#timers.set(this.#next, { at: this.#now + ms, fn });
    return this.#next;
  }

  clearTimer(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Moves time forward, firing due timers in order, and lets the pushes they start run. */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      const due = [...this.#timers].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.#timers.delete(due[0]);
      this.#now = due[1].at;
      due[1].fn();
      await settle();
    }
    this.#now = end;
    await settle();
  }
}

/** Lets promise callbacks queued so far run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}
