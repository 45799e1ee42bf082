// A process-wide limit on responses being written at once (Istio bounds its pushes with
// PILOT_PUSH_THROTTLE and a blocking Send). A response's bytes are built only once it holds a slot,
// so 2,000 proxies connecting together hold at most `limit` full responses in memory instead of one
// each. Slots are granted in request order, so one connection's responses are written in the order
// they were made. A proxy that stops reading keeps its slot for `holdMs` at most, then the slot goes
// on and only that proxy's own stream stays blocked.

/** A slot given out: when, and how to give it back. */
interface HeldSlot {
  since: number;
  release: () => void;
}

export class ResponseSlots {
  readonly #limit: number;
  readonly #holdMs: number;
  readonly #waiting: Array<() => void> = [];
  readonly #onIdle: (() => void) | undefined;
  /** The slots held, oldest first; one timer waits for the oldest's hold to end (not one per response). */
  readonly #held = new Set<HeldSlot>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #inUse = 0;

  /** `onIdle` is called whenever the last slot in use is given back with nobody waiting. */
  constructor(limit: number, holdMs: number, onIdle?: () => void) {
    if (!(limit >= 1)) throw new Error(`response slots: limit must be at least 1, got ${limit}`);
    this.#limit = limit;
    this.#holdMs = holdMs;
    this.#onIdle = onIdle;
  }

  /** Slots held now. */
  get inUse(): number {
    return this.#inUse;
  }

  /** Responses waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Waits for a slot; the function returned gives it back (once; later calls do nothing). */
  async acquire(): Promise<() => void> {
    if (this.#inUse < this.#limit) this.#inUse++;
    else await new Promise<void>((granted) => this.#waiting.push(granted));
    const slot: HeldSlot = {
      since: performance.now(),
      release: () => {
        if (!this.#held.delete(slot)) return;
        const next = this.#waiting.shift();
        // The slot passes straight to the next waiter; only an idle slot is counted back.
        if (next) next();
        else if (--this.#inUse === 0) this.#onIdle?.();
      },
    };
    this.#held.add(slot);
    this.#timer ??= this.#arm(this.#holdMs);
    return slot.release;
  }

  #arm(ms: number): ReturnType<typeof setTimeout> {
    const timer = setTimeout(() => this.#expire(), ms);
    timer.unref();
    return timer;
  }

  /** Gives back the slots held past holdMs, then waits for the oldest left. */
  #expire(): void {
    this.#timer = undefined;
    const now = performance.now();
    for (const slot of this.#held) {
      const left = slot.since + this.#holdMs - now;
      if (left > 0) {
        this.#timer = this.#arm(left);
        return;
      }
      slot.release();
    }
  }
}
