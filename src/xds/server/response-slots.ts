// A process-wide limit on responses being written at once (Istio bounds its pushes with
// PILOT_PUSH_THROTTLE and a blocking Send). A response's bytes are built only once it holds a slot,
// so 2,000 proxies connecting together hold at most `limit` full responses in memory instead of one
// each. Slots are granted in request order, so one connection's responses are written in the order
// they were made. A proxy that stops reading keeps its slot for `holdMs` at most, then the slot goes
// on and only that proxy's own stream stays blocked.

export class ResponseSlots {
  readonly #limit: number;
  readonly #holdMs: number;
  readonly #waiting: Array<() => void> = [];
  readonly #onIdle: (() => void) | undefined;
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
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      const next = this.#waiting.shift();
      // The slot passes straight to the next waiter; only an idle slot is counted back.
      if (next) next();
      else if (--this.#inUse === 0) this.#onIdle?.();
    };
    const timer = setTimeout(release, this.#holdMs);
    timer.unref();
    return release;
  }
}
