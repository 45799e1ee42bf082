// Responses are Buffers outside V8's heap. Those a slow write keeps alive across a few scavenges
// (HTTP/2 flow control holds them while a proxy reads), and the response bodies encode.ts keeps for
// reuse until the server is idle, reach the old generation, which V8 collects only under heap
// pressure: after a mass sync nothing allocates, so they stay allocated at rest (~1 GiB with 1,000
// unscoped sidecars). Once writing has stopped for a while, one full collection (a pause of a few
// hundred ms on a 400 MiB heap) frees them; collections are at least `minIntervalMs` apart, so
// pushes in quick succession cost at most one per interval. (V8's external-memory figure cannot
// decide instead: it is updated lazily after a collection, so it reads high at rest.)
//
// One collection frees the garbage but keeps the pages it emptied (~33 MiB committed and unused with
// 2,000 sidecars); a second releases them (a third released nothing more), as V8's memory reducer
// would, which runs tens of seconds later. So a quiet period ends in COLLECTIONS_PER_QUIET
// collections, each its own task, and writing that resumes between them stops the rest. (Compacting
// too saved 10-20 MiB more at rest but evacuated nearly the whole old generation at once: 200 MiB
// more at peak.)
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** Full collections per quiet period: the first frees, the second releases the emptied pages. */
export const COLLECTIONS_PER_QUIET = 2;

export interface IdleCollectorOptions {
  /** How long writing must have stopped before collecting. */
  quietMs: number;
  /** The least time between two collections. */
  minIntervalMs: number;
  /** Whether writing has resumed (then the next quiet period decides). */
  busy: () => boolean;
  /** Called at the end of each quiet period, before collecting: drops what only the writing needed. */
  onQuiet?: () => void;
  /** A full collection; default V8's, exposed once on first use. */
  collect?: () => void;
}

export class IdleCollector {
  readonly #options: IdleCollectorOptions;
  #collect: (() => void) | undefined;
  #lastCollectionMs = Number.NEGATIVE_INFINITY;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: IdleCollectorOptions) {
    if (!(options.quietMs > 0)) throw new Error(`idle collector: quietMs must be positive, got ${options.quietMs}`);
    this.#options = options;
    this.#collect = options.collect;
  }

  /** Writing has stopped: collect after the quiet period (a later call starts the period again). */
  quiet(): void {
    this.#arm(this.#options.quietMs);
  }

  /**
   * A config change is on its way: a pending collection waits for the quiet period to pass again,
   * so its pause (hundreds of ms) does not delay the push the change brings.
   */
  postpone(): void {
    if (this.#timer !== undefined) this.#arm(this.#options.quietMs);
  }

  /** Stops the pending collection. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#check(), ms);
    this.#timer.unref();
  }

  #check(): void {
    this.#timer = undefined;
    if (this.#options.busy()) return;
    const wait = this.#lastCollectionMs + this.#options.minIntervalMs - Date.now();
    if (wait > 0) {
      this.#arm(wait);
      return;
    }
    this.#options.onQuiet?.();
    this.#collectRound(COLLECTIONS_PER_QUIET);
  }

  /** One collection, then the next in a task of its own unless writing resumed. */
  #collectRound(left: number): void {
    this.#collect ??= exposedGc();
    this.#collect();
    this.#lastCollectionMs = Date.now();
    if (left <= 1) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.#options.busy()) this.#collectRound(left - 1);
    }, 0);
    this.#timer.unref();
  }
}

/** V8's gc(), as `--expose-gc` gives it, without requiring the flag on the command line. */
function exposedGc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}
