// istiod's in-cluster analysis status (pkg/config/analysis/incluster, run by the holder of
// istio-analyze-leader with PILOT_ENABLE_ANALYSIS): the analyzers run over the config once a burst of
// changes has gone quiet (1 s, at most PILOT_ANALYSIS_INTERVAL after its first change), and each
// Istio object of the cluster (a group ending in istio.io) gets the messages about it in
// `status.validationMessages`, with `observedGeneration` (a string, as jsonpb writes int64) the
// generation analyzed. Written only when they differ, through the status subresource (a PUT, as
// istiod's UpdateStatus, field manager pilot-discovery), and only if the object is still at the
// analyzed generation; a refused write is tried again with the store's newer copy. An object whose
// messages went away has them removed (by its status, so also after a restart, which istiod misses).
// The analysis is given (analysis/ is a sibling of this folder).
import { isDeepStrictEqual } from "node:util";
import { type Logger, pino } from "pino";
import { type ConfigObject, keyString, type ObjectKey, objectKeyOf } from "../config/index.ts";
import type { Unregister } from "../krt/index.ts";
import type { ConfigStore } from "../sources/index.ts";
import { errorMessage } from "./kube-requests.ts";
import { WorkQueue } from "./work-queue.ts";

/** One analysis message as Istio's AnalysisMessageBase (JSON). */
export interface ValidationMessage {
  documentationUrl: string;
  level: string;
  type: { code: string };
}

/** What the analysis says: its messages, each about one of the objects it was given. */
export interface ConfigAnalysis {
  /** The kinds it reads (`group/Kind`); changes to others do not analyse again. */
  readonly kinds: ReadonlySet<string>;
  analyze(objects: readonly ConfigObject[]): readonly { object: ConfigObject; message: ValidationMessage }[];
}

/** Where statuses go: the Kubernetes source the objects come from (KubeSource). */
export interface AnalysisStatusTarget {
  readonly source: string;
  writeStatus(obj: ConfigObject, status: unknown): Promise<ConfigObject>;
}

export interface AnalysisStatusOptions {
  store: Pick<ConfigStore, "get" | "list" | "onChange">;
  target: AnalysisStatusTarget;
  analysis: ConfigAnalysis;
  /** How long config must stay unchanged before it is analysed; default 1 s, as istiod. */
  quietMs?: number;
  /** PILOT_ANALYSIS_INTERVAL: the longest a stream of changes delays the analysis; default 10 s. */
  maxDelayMs?: number;
  log?: Logger;
}

interface IstioStatus {
  validationMessages?: unknown;
  observedGeneration?: unknown;
  [field: string]: unknown;
}

/** A status to write: the object's messages at the generation analysed. */
interface Wanted {
  key: ObjectKey;
  generation: number;
  messages: ValidationMessage[];
}

export class AnalysisStatusWriter {
  readonly #options: AnalysisStatusOptions;
  readonly #log: Logger;
  readonly #queue: WorkQueue;
  /** By key string, the statuses the last analysis wants written and not yet written. */
  readonly #wanted = new Map<string, Wanted>();
  #unregister: Unregister | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the first change of the burst waiting to be analysed came. */
  #burstStart: number | undefined;
  #analysed: (() => void)[] = [];
  #stopped = false;

  constructor(options: AnalysisStatusOptions) {
    this.#options = options;
    this.#log = options.log ?? pino({ level: "silent" });
    this.#queue = new WorkQueue({
      reconcile: (key) => this.#reconcile(key),
      retryDelayMs: (retry) => Math.min(200 * 2 ** retry, 30_000),
      onFailure: (key, err) => this.#log.warn({ object: key, err: errorMessage(err) }, "analysis status not written"),
    });
  }

  /** Analyses the config as it is, then again after each burst of changes. */
  start(): void {
    const { store, analysis } = this.#options;
    this.#unregister = store.onChange((events) => {
      if (events.some((e) => analysis.kinds.has(e.key.kind))) this.#schedule();
    });
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    this.#unregister?.();
    clearTimeout(this.#timer);
    this.#queue.stop();
    for (const resolve of this.#analysed.splice(0)) resolve();
  }

  /** Resolves once no analysis waits and every status it wanted is written or given up (for tests). */
  async settled(): Promise<void> {
    if (this.#timer !== undefined) await new Promise<void>((resolve) => this.#analysed.push(resolve));
    await this.#queue.settled();
  }

  #schedule(): void {
    if (this.#stopped) return;
    const { quietMs = 1000, maxDelayMs = 10_000 } = this.#options;
    const now = Date.now();
    this.#burstStart ??= now;
    clearTimeout(this.#timer);
    const delay = Math.max(0, Math.min(quietMs, this.#burstStart + maxDelayMs - now));
    this.#timer = setTimeout(() => this.#analyse(), delay);
  }

  #analyse(): void {
    this.#timer = undefined;
    this.#burstStart = undefined;
    try {
      this.#queueWrites();
    } catch (err) {
      // Bad config must not stop the control plane: the statuses stay as they are until the next change.
      this.#log.error({ err: errorMessage(err) }, "in-cluster analysis failed");
    }
    for (const resolve of this.#analysed.splice(0)) resolve();
  }

  #queueWrites(): void {
    const { store, target, analysis } = this.#options;
    const objects = store.list().flatMap((s) => (analysis.kinds.has(s.key.kind) ? [s.object] : []));
    const messages = new Map<string, ValidationMessage[]>();
    for (const { object, message } of analysis.analyze(objects)) {
      const key = keyString(objectKeyOf(object));
      messages.set(key, [...(messages.get(key) ?? []), message]);
    }
    let queued = 0;
    for (const stored of store.list()) {
      // istiod writes only Istio kinds; file-defined objects have no status to write.
      if (stored.source !== target.source || !stored.key.kind.split("/")[0].endsWith("istio.io")) continue;
      const key = keyString(stored.key);
      const wanted = { key: stored.key, generation: generationOf(stored.object), messages: messages.get(key) ?? [] };
      if (!differs(stored.object, wanted)) {
        this.#wanted.delete(key);
        continue;
      }
      this.#wanted.set(key, wanted);
      this.#queue.add(key);
      queued++;
    }
    this.#log.debug({ objects: objects.length, messages: messages.size, queued }, "config analysed");
  }

  async #reconcile(key: string): Promise<boolean> {
    const { store, target } = this.#options;
    const wanted = this.#wanted.get(key);
    if (!wanted) return true;
    const stored = store.get(wanted.key);
    // Gone, changed since (its change brings another analysis), or already as wanted.
    if (
      !stored ||
      stored.source !== target.source ||
      generationOf(stored.object) !== wanted.generation ||
      !differs(stored.object, wanted)
    ) {
      this.#forget(key, wanted);
      return true;
    }
    const { validationMessages: _old, ...rest } = statusOf(stored.object) ?? {};
    const status: IstioStatus = { ...rest, observedGeneration: String(wanted.generation) };
    // jsonpb leaves out an empty list.
    if (wanted.messages.length > 0) status.validationMessages = wanted.messages;
    await target.writeStatus(stored.object, status);
    this.#forget(key, wanted);
    this.#log.info({ object: key, messages: wanted.messages.length }, "analysis status written");
    return true;
  }

  /** Drops `wanted` unless a later analysis replaced it. */
  #forget(key: string, wanted: Wanted): void {
    if (this.#wanted.get(key) === wanted) this.#wanted.delete(key);
  }
}

function generationOf(object: ConfigObject): number {
  return object.metadata.generation ?? 0;
}

function statusOf(object: ConfigObject): IstioStatus | undefined {
  const status = (object as { status?: unknown }).status;
  return typeof status === "object" && status !== null && !Array.isArray(status) ? (status as IstioStatus) : undefined;
}

/**
 * Whether the object's status is not what is wanted: other messages, or the messages at another
 * generation. An object that has no messages and gets none is left alone (istiod never writes it).
 */
function differs(object: ConfigObject, wanted: Wanted): boolean {
  const status = statusOf(object);
  const current = Array.isArray(status?.validationMessages) ? status.validationMessages : [];
  if (wanted.messages.length === 0) return current.length > 0;
  return (
    !isDeepStrictEqual(current, wanted.messages) || String(status?.observedGeneration) !== String(wanted.generation)
  );
}
