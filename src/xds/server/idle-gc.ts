// Responses are Buffers outside V8's heap. Those a slow write keeps alive across a few scavenges
// (HTTP/2 flow control holds them while a proxy reads), and the response bodies encode.ts keeps for
// reuse until the server is idle, reach the old generation, which V8 collects only under heap
// pressure: after a mass sync nothing allocates, so they stay allocated at rest (~1 GiB with 1,000
// unscoped sidecars). Once writing has stopped for a while, one full collection (a pause of a few
// hundred ms on a 400 MiB heap) frees them; collections are at least `minIntervalMs` apart, so
// pushes in quick succession cost at most one per interval. (V8's external-memory figure cannot
// decide instead: it is updated lazily after a collection, so it reads high at rest.)
//
// The collection is V8's memory-reducing one (its low-memory notification), not gc(): gc() frees
// the garbage but keeps what the sync grew, the young generation at 32 MiB and the old generation's
// emptied pages, until V8's own memory reducer gives them back 30-40 s later (with 2,000 sidecars,
// RSS at rest was 394-427 MiB after two gc()s, 363 MiB after one reducing collection). The reducing
// collection did not raise the peak.
//
// A full collection has a cost beyond its pause: V8 drops the optimized code that refers to a hidden
// class no live object has any more (the shapes of what one push makes and drops, in our code, grpc-js's
// and Node's streams), so the next push runs the push path unoptimized and with the young generation
// shrunk to 1 MiB (an endpoint change right after one took ~50 ms more to reach every proxy). So the
// collector collects only once the process holds `minGrowthBytes` more (V8's old generation and
// ArrayBuffers; the young generation is collected often anyway) than the last collection left: after
// a sync, not after each small push, whose garbage V8 collects on its own.
//
// V8's own memory reducer is off (bin/sluiced.js's `--no-memory-reducer`): after any full collection
// it starts another, memory-reducing, some seconds later once allocation is slow, with the same cost
// to optimized code and ~380 ms of incremental marking on the main thread (2,000 scoped sidecars),
// into whatever push runs then. This collector does its work at a time it chooses, when writing stopped.
import { createRequire } from "node:module";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { trimMallocHeap } from "../../util/index.ts";

export interface IdleCollectorOptions {
  /** How long writing must have stopped before collecting. */
  quietMs: number;
  /** The least time between two collections. */
  minIntervalMs: number;
  /** Whether writing has resumed (then the next quiet period decides). */
  busy: () => boolean;
  /** Called at the end of each quiet period, before collecting: drops what only the writing needed. */
  onQuiet?: () => void;
  /** How much more memory than the last collection left makes a collection worth its cost. */
  minGrowthBytes: number;
  /** The memory a collection would shrink; default V8's old generation in use and the ArrayBuffers allocated. */
  heldBytes?: () => number;
  /** A full collection, calling `done` once it is over; default V8's memory-reducing one (see memoryReducingGc). */
  collect?: (done: () => void) => void;
}

const YOUNG_SPACES = new Set(["new_space", "new_large_object_space"]);

function oldGenerationAndArrayBufferBytes(): number {
  let bytes = process.memoryUsage().arrayBuffers;
  for (const space of getHeapSpaceStatistics()) if (!YOUNG_SPACES.has(space.space_name)) bytes += space.space_used_size;
  return bytes;
}

export class IdleCollector {
  readonly #options: IdleCollectorOptions;
  readonly #heldBytes: () => number;
  #collect: ((done: () => void) => void) | undefined;
  #lastCollectionMs = Number.NEGATIVE_INFINITY;
  /** What the process held when the last collection ended (at first, when the collector was made). */
  #heldAfterCollection: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The next quiet period collects whatever the growth (see startupDone). */
  #collectNext = false;

  constructor(options: IdleCollectorOptions) {
    if (!(options.quietMs > 0)) throw new Error(`idle collector: quietMs must be positive, got ${options.quietMs}`);
    if (!(options.minGrowthBytes >= 0)) {
      throw new Error(`idle collector: minGrowthBytes must not be negative, got ${options.minGrowthBytes}`);
    }
    this.#options = options;
    this.#collect = options.collect;
    this.#heldBytes = options.heldBytes ?? oldGenerationAndArrayBufferBytes;
    this.#heldAfterCollection = this.#heldBytes();
  }

  /** Writing has stopped: collect after the quiet period (a later call starts the period again). */
  quiet(): void {
    this.#arm(this.#options.quietMs);
  }

  /**
   * Start-up is done (the mesh loaded, no proxy yet): collect after the quiet period whatever the
   * growth, as loading leaves the young generation grown (32 MiB) and the old generation's pages
   * committed, and no writing follows to end with a collection (RSS before any proxy of the scoped
   * 2,000 bench 215 -> 170 MiB). Writing that starts first defers it to its own end.
   */
  startupDone(): void {
    this.#collectNext = true;
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
    const held = this.#heldBytes();
    // Less than the last collection left: V8 has collected since, and that is the mark now.
    this.#heldAfterCollection = Math.min(this.#heldAfterCollection, held);
    if (!this.#collectNext && held - this.#heldAfterCollection < this.#options.minGrowthBytes) return;
    this.#collectNext = false;
    this.#collect ??= memoryReducingGc();
    this.#lastCollectionMs = Date.now();
    this.#collect(() => {
      // What the collection freed outside V8's heap goes back to the system too.
      trimMallocHeap();
      this.#heldAfterCollection = this.#heldBytes();
    });
  }
}

/**
 * V8's memory-reducing full collection, which the inspector's HeapProfiler.collectGarbage asks for,
 * through an in-process session (no port is opened); it runs in a task of its own. Where Node was built
 * without the inspector, V8's plain gc().
 */
function memoryReducingGc(): (done: () => void) => void {
  if (!process.features.inspector) return exposedGc();
  const { Session } = createRequire(import.meta.url)("node:inspector") as typeof import("node:inspector");
  return (done) => {
    const session = new Session();
    session.connect();
    // Disconnecting from within the callback deadlocks: V8 runs it holding the agent's lock.
    session.post("HeapProfiler.collectGarbage", () =>
      setImmediate(() => {
        session.disconnect();
        done();
      }),
    );
  };
}

/** V8's gc(), as `--expose-gc` gives it, without requiring the flag on the command line. */
function exposedGc(): (done: () => void) => void {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  return (done) => {
    gc();
    done();
  };
}
