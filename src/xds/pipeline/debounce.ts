// Istio's push debounce (pilot/pkg/xds/discovery.go): requests arriving close together are merged
// into one, pushed once the changes have been quiet for `afterMs` or once the first one has
// waited `maxMs`. One push runs at a time; requests arriving meanwhile wait for the next one.
import { mergePushRequests, type PushRequest } from "../../model/index.ts";

export interface DebounceOptions {
  /** Quiet period before a push (PILOT_DEBOUNCE_AFTER, 100 ms). */
  afterMs: number;
  /** Longest a change waits while events keep coming (PILOT_DEBOUNCE_MAX, 10 s). */
  maxMs: number;
  /** Debounce endpoint-only (incremental EDS) requests too (PILOT_ENABLE_EDS_DEBOUNCE, true). */
  edsDebounce: boolean;
}

export const DEFAULT_DEBOUNCE: DebounceOptions = { afterMs: 100, maxMs: 10_000, edsDebounce: true };

/** Time and timers, injected so tests drive the debounce without waiting. */
export interface Clock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** What the debouncer hands over: the merged request, how many it merged, and when the first arrived. */
export interface DebouncedPush<Snapshot = unknown> {
  req: PushRequest<Snapshot>;
  events: number;
  /** Clock time of the first merged request. */
  startedAt: number;
}

export class Debouncer<Snapshot = unknown> {
  readonly #options: DebounceOptions;
  readonly #clock: Clock;
  readonly #push: (push: DebouncedPush<Snapshot>) => void | Promise<void>;
  #pending: PushRequest<Snapshot> | undefined;
  #events = 0;
  #startedAt = 0;
  #lastEventAt = 0;
  #timer: unknown;
  #busy = false;
  #stopped = false;

  constructor(
    options: DebounceOptions,
    push: (push: DebouncedPush<Snapshot>) => void | Promise<void>,
    clock: Clock = systemClock,
  ) {
    this.#options = options;
    this.#push = push;
    this.#clock = clock;
  }

  /** Adds a request standing for `events` changes. */
  add(req: PushRequest<Snapshot>, events = 1): void {
    if (this.#stopped) return;
    if (!this.#options.edsDebounce && !req.full) {
      // Endpoint-only requests go straight out when EDS debounce is off.
      void this.#push({ req, events, startedAt: this.#clock.now() });
      return;
    }
    this.#lastEventAt = this.#clock.now();
    if (this.#events === 0) {
      this.#startedAt = this.#lastEventAt;
      this.#arm(this.#options.afterMs);
    }
    this.#events += events;
    this.#pending = this.#pending ? mergePushRequests(this.#pending, req) : req;
  }

  /** Drops what is pending and ignores later requests. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#pending = undefined;
  }

  #arm(ms: number): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      if (!this.#busy) this.#tick();
    }, ms);
  }

  /** Pushes when it has been quiet long enough or waited too long; otherwise waits for the rest of the quiet period. */
  #tick(): void {
    const req = this.#pending;
    if (!req || this.#stopped) return;
    const now = this.#clock.now();
    const quiet = now - this.#lastEventAt;
    if (now - this.#startedAt < this.#options.maxMs && quiet < this.#options.afterMs) {
      this.#arm(this.#options.afterMs - quiet);
      return;
    }
    const push = { req, events: this.#events, startedAt: this.#startedAt };
    this.#pending = undefined;
    this.#events = 0;
    this.#busy = true;
    Promise.resolve()
      .then(() => this.#push(push))
      .finally(() => {
        this.#busy = false;
        this.#tick();
      });
  }
}
