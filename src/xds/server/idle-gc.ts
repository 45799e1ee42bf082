// Responses are Buffers outside V8's heap. Those a slow write keeps alive across a few scavenges
// (HTTP/2 flow control holds them while a proxy reads), and the response bodies encode.ts keeps for
// reuse until the server is idle, reach the old generation, which V8 collects only under heap
// pressure: after a mass sync nothing allocates, so they stay allocated at rest. Once writing has
// stopped for a while and external memory has grown by more than a threshold since the last
// collection, one full collection (a pause of a few hundred ms on a 400 MiB heap) frees them.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export interface IdleCollectorOptions {
  /** How long writing must have stopped before collecting. */
  quietMs: number;
  /** Growth of external memory since the last collection that makes one worth its pause. */
  growthBytes: number;
  /** Whether writing has resumed (then the next quiet period decides). */
  busy: () => boolean;
  /** Called at the end of each quiet period, before deciding: drops what only the writing needed. */
  onQuiet?: () => void;
  /** A full collection; default V8's, exposed once on first use. */
  collect?: () => void;
  /** Bytes outside V8's heap now; default process.memoryUsage().external. */
  external?: () => number;
}

export class IdleCollector {
  readonly #options: IdleCollectorOptions;
  readonly #external: () => number;
  #collect: (() => void) | undefined;
  #baseline: number;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: IdleCollectorOptions) {
    if (!(options.quietMs > 0)) throw new Error(`idle collector: quietMs must be positive, got ${options.quietMs}`);
    this.#options = options;
    this.#collect = options.collect;
    this.#external = options.external ?? (() => process.memoryUsage().external);
    this.#baseline = this.#external();
  }

  /** Writing has stopped: decide after the quiet period (a later call starts the period again). */
  quiet(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#check(), this.#options.quietMs);
    this.#timer.unref();
  }

  /** Stops the pending check. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #check(): void {
    this.#timer = undefined;
    if (this.#options.busy()) return;
    this.#options.onQuiet?.();
    // Memory freed since (by V8 on its own, or swept after the last collection) lowers the baseline.
    const external = this.#external();
    this.#baseline = Math.min(this.#baseline, external);
    if (external - this.#baseline < this.#options.growthBytes) return;
    this.#collect ??= exposedGc();
    this.#collect();
    this.#baseline = this.#external();
  }
}

/** V8's gc(), as `--expose-gc` gives it, without requiring the flag on the command line. */
function exposedGc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}
