// Writes the statuses the live conversion computes back to the cluster's objects (Istio's gateway status
// writer). The conversion lists a status only when it differs from the object's own, so a write happens
// only on change; the write comes back through the watch, after which the conversion lists it no more.
// Objects defined by other sources (files) have no status to write, nor have objects of another revision
// (`owns`: their istio.io/rev, else their namespace's, names another revision's tag). Writes run one at a time; a write
// refused because the object changed meanwhile (409) is tried again with the object as the store holds
// it then, until the status is written or no longer wanted (failures back off, doubling up to 30 s).
import type { Logger } from "pino";
import { type ConfigObject, kindKeyOf, objectKeyOf } from "../config/index.ts";
import type { Singleton, Unregister } from "../krt/index.ts";
// The store module alone: the sources' index would load every source (Kubernetes, xDS) with the conversion.
import type { ConfigStore } from "../sources/index.ts";
import { stampTransitionTimes } from "./conditions.ts";
import type { ConversionResult } from "./convert.ts";

/** Where statuses go: the Kubernetes source that defines the objects (KubeSource). */
export interface StatusTarget {
  /** The source id objects of the cluster carry in the store. */
  readonly source: string;
  /** Replaces the object's status; rejects with a 409 error when `obj` is stale. */
  writeStatus(obj: ConfigObject, status: unknown): Promise<ConfigObject>;
}

export interface StatusWriterOptions {
  conversion: Singleton<ConversionResult>;
  store: Pick<ConfigStore, "get">;
  target: StatusTarget;
  /** Whether an object's status is this control plane's to write (istiod's tag watcher IsMine); default all. */
  owns?: (obj: ConfigObject) => boolean;
  /** Tells `listener` when `owns` may answer otherwise (a revision tag moved); returns how to stop telling. */
  onOwnsChange?: (listener: () => void) => () => void;
  /** First delay before trying a failed write again; default 200 ms. */
  retryMs?: number;
  /** The lastTransitionTime of conditions that change; default the current time. */
  now?: () => string;
  log?: Logger;
}

const MAX_RETRY_MS = 30_000;

function statusKey(doc: ConfigObject): string {
  return `${kindKeyOf(doc)} ${doc.metadata.namespace ?? ""}/${doc.metadata.name ?? ""}`;
}

function rfc3339Now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

export class GatewayStatusWriter {
  readonly #options: StatusWriterOptions;
  /** Statuses the conversion wants now, by "kindKey ns/name". */
  #wanted = new Map<string, ConfigObject>();
  /** Keys to look at, in order. */
  readonly #queue = new Set<string>();
  /** Each key's last write: the resourceVersions it was made against and produced, and the status it asked for. */
  readonly #written = new Map<string, { against: string | undefined; produced: string | undefined; status: string }>();
  #unregister: Unregister | undefined;
  #unwatchOwners: (() => void) | undefined;
  #running: Promise<void> | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #delayMs: number;

  constructor(options: StatusWriterOptions) {
    this.#options = options;
    this.#delayMs = options.retryMs ?? 200;
  }

  start(): void {
    this.#unregister ??= this.#options.conversion.register((event) => {
      const statuses = event.type === "delete" ? [] : event.new.statuses;
      this.#wanted = new Map(statuses.map((doc) => [statusKey(doc), doc]));
      for (const key of this.#wanted.keys()) this.#queue.add(key);
      this.#kick();
    });
    this.#unwatchOwners ??= this.#options.onOwnsChange?.(() => {
      for (const key of this.#wanted.keys()) this.#queue.add(key);
      this.#kick();
    });
  }

  stop(): void {
    this.#unregister?.();
    this.#unregister = undefined;
    this.#unwatchOwners?.();
    this.#unwatchOwners = undefined;
    clearTimeout(this.#retry);
    this.#queue.clear();
  }

  /** Resolves once every queued write has been made or given up until its retry (for tests). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  #kick(): void {
    this.#running ??= this.#drain().finally(() => {
      this.#running = undefined;
    });
  }

  async #drain(): Promise<void> {
    const failed: string[] = [];
    for (const key of this.#queue) {
      this.#queue.delete(key);
      if (!(await this.#write(key))) failed.push(key);
    }
    if (failed.length === 0) {
      this.#delayMs = this.#options.retryMs ?? 200;
      return;
    }
    if (!this.#unregister) return;
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => {
      for (const key of failed) this.#queue.add(key);
      this.#kick();
    }, this.#delayMs);
    this.#retry.unref();
    this.#delayMs = Math.min(this.#delayMs * 2, MAX_RETRY_MS);
  }

  /** Writes the wanted status of `key` if it still needs writing; false when it should be tried again. */
  async #write(key: string): Promise<boolean> {
    const { store, target, log } = this.#options;
    const doc = this.#wanted.get(key);
    if (!doc) return true;
    const stored = store.get(objectKeyOf(doc));
    if (!stored || stored.source !== target.source) return true;
    if (this.#options.owns && !this.#options.owns(stored.object)) return true;
    const current = stored.object;
    const version = current.metadata.resourceVersion;
    const status = JSON.stringify(doc.status);
    const last = this.#written.get(key);
    // Written against this version already: the watch has not brought the result yet. If the conversion
    // wants something else by now, look again once it has (the conversion may then list the same status).
    if (last && last.against === version) return last.status === status;
    // The object is our own write, yet the conversion still asks for the same: the API server keeps the
    // status in another form (pruned or defaulted fields). Writing it again would loop.
    if (last && last.produced === version && last.status === status) return true;
    const now = (this.#options.now ?? rfc3339Now)();
    try {
      const written = await target.writeStatus(current, stampTransitionTimes(doc.status, now));
      this.#written.set(key, { against: version, produced: written.metadata.resourceVersion, status });
      return true;
    } catch (error) {
      log?.warn({ object: key, err: error }, "status write failed; will retry");
      return false;
    }
  }
}
