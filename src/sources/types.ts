// What every config source (file, Kubernetes, memory, xDS) writes into: the config store. Sources
// own the objects they write (a source id), so one source's relist or file reload never touches
// another's objects.
import type { ConfigObject, ObjectKey } from "../config/index.ts";

export type ConfigEventType = "add" | "update" | "delete";

export interface ConfigEvent {
  type: ConfigEventType;
  key: ObjectKey;
  /** The object before the change (update, delete). */
  old?: ConfigObject;
  /** The object after the change (add, update). */
  new?: ConfigObject;
}

/** A problem a source met with some input (a file that fails to parse or validate, a rejected object). */
export interface SourceProblem {
  source: string;
  /** Where: a file path with line, or a Kubernetes object reference. */
  where: string;
  message: string;
}

/** The write side of the config store, as sources see it. Objects are validated before they get here. */
export interface ConfigWriter {
  /** Adds or replaces one object owned by `source`. */
  upsert(source: string, obj: ConfigObject): void;
  /** Removes one object owned by `source`, if present. */
  delete(source: string, key: ObjectKey): void;
  /**
   * Atomically replaces everything `source` owns within `scope` (a file path, or a kind key for a
   * Kubernetes relist) with `objects`: adds, updates and deletes are emitted as one batch.
   */
  replace(source: string, scope: string, objects: readonly ConfigObject[]): void;
  /** Records (or with `problems` empty, clears) the problems of `scope` for /debug/configz and metrics. */
  reportProblems(source: string, scope: string, problems: readonly SourceProblem[]): void;
}
