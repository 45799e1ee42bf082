// The config store: every source (file, Kubernetes, memory, xDS) writes here, and everything
// downstream reads from here. Each object is kept with the source and scope that define it and a
// store resourceVersion. The read side is one krt collection per kind, plus a stream of event
// batches (one per write, or per store.batch) for the push pipeline to debounce.
//
// The same object (kind, namespace, name) may be defined by several scopes: two files, or a file and
// the cluster. Only one definition is in force: the one of the source listed first in `sourceOrder`
// (sources not listed follow, by name), then the scope that sorts first. The others are kept, and
// reported as problems of their scopes; when the winner goes away, the next one takes over.
import { isDeepStrictEqual } from "node:util";
import type { Logger } from "pino";
import { Gauge, type Registry } from "prom-client";
import { type ConfigObject, collectionKeyOf, keyString, type ObjectKey, objectKeyOf } from "../config/index.ts";
import type { KindObjects } from "../config/types/kind-objects.gen.ts";
import { batch, type Collection, type DebugRegistry, StaticCollection, type Unregister } from "../krt/index.ts";
import { deepFreeze } from "../util/index.ts";
import type { ConfigEvent, ConfigWriter, SourceProblem } from "./types.ts";

/** An object as the store holds it: the definition in force, who defines it, and when it last changed. */
export interface StoredConfig {
  readonly key: ObjectKey;
  readonly object: ConfigObject;
  readonly source: string;
  readonly scope: string;
  /** The store version at the object's last change; versions increase across the whole store. */
  readonly resourceVersion: number;
}

/** A problem as listed for /debug/configz: a source's report, or a definition that lost a conflict. */
export interface StoreProblem extends SourceProblem {
  scope: string;
}

export interface ConfigStoreOptions {
  /** Sources by priority when two define the same object; sources not listed come after, by name. */
  sourceOrder?: readonly string[];
  /** Where the problem gauge is registered; no gauge without it. */
  metrics?: Registry;
  /** Shows the per-kind collections in krt debug output. */
  debug?: DebugRegistry;
  /** Problems and conflicts are logged as they appear. */
  log?: Logger;
}

/** The metric of problems per source (Istio has none for this). */
export const CONFIG_PROBLEMS_METRIC = "sluice_config_problems";

/** A definition of an object by one scope of one source. */
interface Definition {
  source: string;
  scope: string;
  object: ConfigObject;
}

interface Entry {
  key: ObjectKey;
  /** Every definition, the one in force first. */
  definitions: Definition[];
  stored?: StoredConfig;
}

export class ConfigStore implements ConfigWriter {
  private readonly sourceOrder: readonly string[];
  private readonly debugRegistry: DebugRegistry | undefined;
  private readonly log: Logger | undefined;
  /** By keyString ("group/Kind namespace/name"). */
  private readonly entries = new Map<string, Entry>();
  /** The store keys each scope defines, by scope id. */
  private readonly scopes = new Map<string, Set<string>>();
  /** Keys defined more than once. */
  private readonly conflicted = new Set<string>();
  private readonly reported = new Map<string, StoreProblem[]>();
  private readonly collections = new Map<string, StaticCollection<ConfigObject>>();
  private readonly handlers = new Set<(events: readonly ConfigEvent[]) => void>();
  /** Keys changed by the open write, with what was stored before it. */
  private readonly touched = new Map<string, StoredConfig | undefined>();
  private depth = 0;
  private readonly undelivered: ConfigEvent[][] = [];
  private delivering = false;
  private version = 0;

  constructor(options: ConfigStoreOptions = {}) {
    this.sourceOrder = options.sourceOrder ?? [];
    this.debugRegistry = options.debug;
    this.log = options.log;
    if (options.metrics) {
      const store = this;
      new Gauge({
        name: CONFIG_PROBLEMS_METRIC,
        help: "Config inputs with problems (unreadable, invalid, or defined twice), by source.",
        labelNames: ["source"],
        registers: [options.metrics],
        collect() {
          this.reset();
          for (const problem of store.problems()) this.inc({ source: problem.source });
        },
      });
    }
  }

  /** The latest store version: the resourceVersion of the most recent change. */
  get resourceVersion(): number {
    return this.version;
  }

  upsert(source: string, obj: ConfigObject): void {
    // Single-object writes belong to the scope a relist of the kind (replace with the kind key) covers.
    const key = objectKeyOf(obj);
    this.batch(() => {
      // Objects in the store are immutable; sources hand over objects they no longer touch.
      this.define(keyString(key), key, { source, scope: key.kind, object: deepFreeze(obj) });
      const scope = scopeId(source, key.kind);
      this.scopes.set(scope, (this.scopes.get(scope) ?? new Set()).add(keyString(key)));
    });
  }

  delete(source: string, key: ObjectKey): void {
    this.batch(() => {
      this.undefine(keyString(key), source, key.kind);
      const scope = scopeId(source, key.kind);
      const keys = this.scopes.get(scope);
      keys?.delete(keyString(key));
      if (keys?.size === 0) this.scopes.delete(scope);
    });
  }

  /** Objects repeated in `objects` (same kind, namespace and name): the first is kept. */
  replace(source: string, scope: string, objects: readonly ConfigObject[]): void {
    this.batch(() => {
      const next = new Map<string, ConfigObject>();
      for (const obj of objects) {
        const id = keyString(objectKeyOf(obj));
        if (!next.has(id)) next.set(id, deepFreeze(obj));
      }
      for (const id of this.scopes.get(scopeId(source, scope)) ?? []) {
        if (!next.has(id)) this.undefine(id, source, scope);
      }
      for (const [id, obj] of next) this.define(id, objectKeyOf(obj), { source, scope, object: obj });
      if (next.size === 0) this.scopes.delete(scopeId(source, scope));
      else this.scopes.set(scopeId(source, scope), new Set(next.keys()));
    });
  }

  /** New or changed problems are logged here, once, whichever source found them. */
  reportProblems(source: string, scope: string, problems: readonly SourceProblem[]): void {
    const id = scopeId(source, scope);
    const previous = this.reported.get(id) ?? [];
    const next = problems.map((p) => ({ ...p, scope }));
    if (next.length === 0) this.reported.delete(id);
    else this.reported.set(id, next);
    if (isDeepStrictEqual(previous, next)) return;
    for (const problem of next) this.log?.error({ source, where: problem.where }, problem.message);
    if (next.length === 0) this.log?.info({ source, scope }, "problems resolved");
  }

  /**
   * Applies every write made by `apply` as one change: collections update in one krt batch, and
   * handlers get one event batch.
   */
  batch<R>(apply: () => R): R {
    this.depth += 1;
    try {
      return apply();
    } finally {
      this.depth -= 1;
      if (this.depth === 0) this.commit();
    }
  }

  /**
   * The objects of one kind in force, keyed "namespace/name" (or "name" when cluster-scoped); typed by the
   * kind when it is a literal kind key: admission validated each object against its kind's schema.
   */
  collection<K extends keyof KindObjects>(kind: K): Collection<KindObjects[K]>;
  collection(kind: string): Collection<ConfigObject>;
  collection(kind: string): Collection<ConfigObject> {
    let collection = this.collections.get(kind);
    if (!collection) {
      collection = new StaticCollection(
        this.list(kind).map((s) => s.object),
        {
          name: `config ${kind}`,
          keyOf: (obj) => collectionKeyOf(objectKeyOf(obj)),
          // The store only writes what changed, so a new reference is a change.
          equals: (a, b) => a === b,
          debug: this.debugRegistry,
        },
      );
      this.collections.set(kind, collection);
    }
    return collection;
  }

  get(key: ObjectKey): StoredConfig | undefined {
    return this.entries.get(keyString(key))?.stored;
  }

  /** Objects in force, of one kind or all, sorted by kind, namespace and name. */
  list(kind?: string): StoredConfig[] {
    // Sorted by the entries' own keys (storeKey), not keys made again in every comparison.
    const keyed: [string, StoredConfig][] = [];
    for (const [id, entry] of this.entries) {
      if (entry.stored && (kind === undefined || entry.key.kind === kind)) keyed.push([id, entry.stored]);
    }
    return keyed.sort(([a], [b]) => compareStrings(a, b)).map(([, stored]) => stored);
  }

  /** Calls `handler` with the events of each change, after the collections have been updated. */
  onChange(handler: (events: readonly ConfigEvent[]) => void): Unregister {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** What sources reported, and every definition that lost a conflict; sorted by source and scope. */
  problems(): StoreProblem[] {
    const problems = [...this.reported.values()].flat();
    for (const id of this.conflicted) {
      const entry = this.entries.get(id);
      if (!entry) continue;
      const [winner, ...losers] = entry.definitions;
      for (const loser of losers) {
        problems.push({
          source: loser.source,
          scope: loser.scope,
          where: loser.scope,
          message: `${keyString(entry.key)} is also defined by ${winner.source} ${winner.scope}, which is in force; this definition is ignored`,
        });
      }
    }
    return problems.sort((a, b) => compareStrings(a.source, b.source) || compareStrings(a.scope, b.scope));
  }

  private entryFor(id: string, key: ObjectKey): Entry {
    let entry = this.entries.get(id);
    if (!entry) {
      entry = { key, definitions: [] };
      this.entries.set(id, entry);
    }
    if (!this.touched.has(id)) this.touched.set(id, entry.stored);
    return entry;
  }

  /** Adds or replaces the definition of one scope, keeping definitions in priority order. */
  private define(id: string, key: ObjectKey, definition: Definition): void {
    const definitions = this.entryFor(id, key).definitions;
    const at = definitions.findIndex((d) => d.source === definition.source && d.scope === definition.scope);
    if (at >= 0) definitions.splice(at, 1);
    const before = definitions.findIndex((d) => this.compareDefinitions(definition, d) < 0);
    definitions.splice(before < 0 ? definitions.length : before, 0, definition);
  }

  private undefine(id: string, source: string, scope: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    const definitions = this.entryFor(id, entry.key).definitions;
    const at = definitions.findIndex((d) => d.source === source && d.scope === scope);
    if (at >= 0) definitions.splice(at, 1);
  }

  private compareDefinitions(a: Definition, b: Definition): number {
    return (
      this.sourceRank(a.source) - this.sourceRank(b.source) ||
      compareStrings(a.source, b.source) ||
      compareStrings(a.scope, b.scope)
    );
  }

  private sourceRank(source: string): number {
    const rank = this.sourceOrder.indexOf(source);
    return rank < 0 ? this.sourceOrder.length : rank;
  }

  /** Brings the objects in force in line with the definitions the write changed, then tells everyone. */
  private commit(): void {
    const events: ConfigEvent[] = [];
    const changes = new Map<string, { upsert: ConfigObject[]; delete: string[] }>();
    const changesOf = (kind: string) => {
      let change = changes.get(kind);
      if (!change) {
        change = { upsert: [], delete: [] };
        changes.set(kind, change);
      }
      return change;
    };
    for (const [id, before] of this.touched) {
      const entry = this.entries.get(id);
      if (!entry) continue;
      this.noteConflict(id, entry);
      const winner = entry.definitions[0];
      const { key } = entry;
      if (!winner) {
        this.entries.delete(id);
        if (before) {
          events.push({ type: "delete", key, old: before.object });
          changesOf(key.kind).delete.push(collectionKeyOf(key));
        }
        continue;
      }
      // A definition equal to the one in force (a reload, a takeover by an identical copy) is no change.
      if (before && (before.object === winner.object || isDeepStrictEqual(before.object, winner.object))) {
        entry.stored = { ...before, source: winner.source, scope: winner.scope };
        continue;
      }
      this.version += 1;
      entry.stored = {
        key,
        object: winner.object,
        source: winner.source,
        scope: winner.scope,
        resourceVersion: this.version,
      };
      events.push(
        before
          ? { type: "update", key, old: before.object, new: winner.object }
          : { type: "add", key, new: winner.object },
      );
      changesOf(key.kind).upsert.push(winner.object);
    }
    this.touched.clear();
    if (events.length === 0) return;
    batch(() => {
      for (const [kind, change] of changes) this.collections.get(kind)?.update(change);
    });
    this.deliver(events);
  }

  private noteConflict(id: string, entry: Entry): void {
    if (entry.definitions.length < 2) {
      this.conflicted.delete(id);
      return;
    }
    if (this.conflicted.has(id)) return;
    this.conflicted.add(id);
    const [winner, ...losers] = entry.definitions;
    this.log?.warn(
      { kind: entry.key.kind, object: collectionKeyOf(entry.key), inForce: `${winner.source} ${winner.scope}` },
      `defined more than once; ignored: ${losers.map((d) => `${d.source} ${d.scope}`).join(", ")}`,
    );
  }

  /** Handlers see batches in the order the changes happened, even when a handler writes to the store. */
  private deliver(events: ConfigEvent[]): void {
    this.undelivered.push(events);
    if (this.delivering) return;
    this.delivering = true;
    let failure: { error: unknown } | undefined;
    try {
      for (let next = this.undelivered.shift(); next; next = this.undelivered.shift()) {
        for (const handler of [...this.handlers]) {
          try {
            handler(next);
          } catch (error) {
            failure ??= { error };
          }
        }
      }
    } finally {
      this.delivering = false;
    }
    if (failure) throw failure.error;
  }
}

function scopeId(source: string, scope: string): string {
  return `${source}\u0000${scope}`;
}

/** Code-unit order: the same on every machine, unlike localeCompare. */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
