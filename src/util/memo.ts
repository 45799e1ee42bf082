// Memo tables of pure builders. A builder that keeps what it built from an immutable input (a config
// object, a service, an endpoint list, a mesh config) keeps it in a table it is given, never in a map of
// its module: the tables belong to whoever owns the builds (the xDS server's XdsCache, which lists them
// on /debug/cachez), and a build given no tables (NO_MEMOS) keeps nothing and gives the same bytes.
//
// A table is named by a descriptor declared beside the builder (`weakTable`, `mapTable`, `objectTable`):
// it holds nothing itself, only the table's name and the types of its keys and values. `Memos` gives the
// table of a descriptor: a WeakMap keyed by the input objects (an entry goes when its key does), a Map
// keyed by values (the builder bounds it, as before), or a memo object of its own (a NameMemo).

let lastTableId = 0;

/** A memo table keyed by input objects (a WeakMap), as its builder declares it. */
export interface WeakTable<K extends object, V> {
  readonly kind: "weak";
  /** The table's name on /debug/cachez?stats=true (`<folder or generator>/<table>`). */
  readonly name: string;
  /** The table's slot in a MemoStore. */
  readonly id: number;
  /** Types only: never set. */
  readonly types?: (key: K) => V;
}

/** A memo table keyed by values (a Map); the builder bounds its size. */
export interface MapTable<K, V> {
  readonly kind: "map";
  readonly name: string;
  readonly id: number;
  readonly types?: (key: K) => V;
}

/** A memo that is an object of its own (a NameMemo), made by `make`; its counters show if it has them. */
export interface ObjectTable<T extends object> {
  readonly kind: "object";
  readonly name: string;
  readonly id: number;
  readonly make: () => T;
}

/** What a memo object may count, for /debug/cachez?stats=true. */
export interface MemoCounters {
  readonly entries: number;
  readonly hits: number;
  readonly misses: number;
}

/** Declares a WeakMap memo table named `name`. */
export function weakTable<K extends object, V>(name: string): WeakTable<K, V> {
  return Object.freeze({ kind: "weak", name, id: lastTableId++ });
}

/** Declares a Map memo table named `name`. */
export function mapTable<K, V>(name: string): MapTable<K, V> {
  return Object.freeze({ kind: "map", name, id: lastTableId++ });
}

/** Declares a memo object named `name`, made by `make`. */
export function objectTable<T extends object>(name: string, make: () => T): ObjectTable<T> {
  return Object.freeze({ kind: "object", name, id: lastTableId++, make });
}

/** The memo tables a build may keep values in. */
export interface Memos {
  /** The WeakMap of `table`. */
  weak<K extends object, V>(table: WeakTable<K, V>): WeakMap<K, V>;
  /** The Map of `table`. */
  map<K, V>(table: MapTable<K, V>): Map<K, V>;
  /** The memo object of `table`. */
  object<T extends object>(table: ObjectTable<T>): T;
}

/** Memos that keep nothing: each table asked for is new and empty (builds outside any cache). */
export const NO_MEMOS: Memos = Object.freeze({
  weak: <K extends object, V>() => new WeakMap<K, V>(),
  map: <K, V>() => new Map<K, V>(),
  object: <T extends object>(table: ObjectTable<T>) => table.make(),
});

/** One memo table's counters, as /debug/cachez?stats=true shows them. */
export interface MemoStats {
  name: string;
  kind: "weak" | "map" | "object";
  /** Entries held (a Map); for a WeakMap, entries added (the collector drops them unseen). */
  entries: number;
  /** Lookups that found a value. */
  hits: number;
  /** Lookups that found none. */
  misses: number;
}

/** A WeakMap counting its lookups and additions. */
class CountedWeakMap<K extends object, V> extends WeakMap<K, V> {
  hits = 0;
  misses = 0;
  added = 0;

  override get(key: K): V | undefined {
    const value = super.get(key);
    if (value === undefined) this.misses++;
    else this.hits++;
    return value;
  }

  override set(key: K, value: V): this {
    if (!super.has(key)) this.added++;
    return super.set(key, value);
  }
}

/** A Map counting its lookups. */
class CountedMap<K, V> extends Map<K, V> {
  hits = 0;
  misses = 0;

  override get(key: K): V | undefined {
    const value = super.get(key);
    if (value === undefined) this.misses++;
    else this.hits++;
    return value;
  }
}

type Table =
  | { name: string; map: CountedWeakMap<object, unknown> }
  | { name: string; map: CountedMap<unknown, unknown> }
  | { name: string; object: object };

/** Memos that keep their tables, each made on first use, with each table's counters. */
export class MemoStore implements Memos {
  readonly #tables: (Table | undefined)[] = [];

  weak<K extends object, V>(table: WeakTable<K, V>): WeakMap<K, V> {
    let kept = this.#tables[table.id] as { map: WeakMap<K, V> } | undefined;
    if (kept === undefined) {
      kept = { map: new CountedWeakMap<K, V>() };
      this.#tables[table.id] = { name: table.name, map: kept.map as CountedWeakMap<object, unknown> };
    }
    return kept.map;
  }

  map<K, V>(table: MapTable<K, V>): Map<K, V> {
    let kept = this.#tables[table.id] as { map: Map<K, V> } | undefined;
    if (kept === undefined) {
      kept = { map: new CountedMap<K, V>() };
      this.#tables[table.id] = { name: table.name, map: kept.map as CountedMap<unknown, unknown> };
    }
    return kept.map;
  }

  object<T extends object>(table: ObjectTable<T>): T {
    let kept = this.#tables[table.id] as { object: T } | undefined;
    if (kept === undefined) {
      kept = { object: table.make() };
      this.#tables[table.id] = { name: table.name, object: kept.object };
    }
    return kept.object;
  }

  /** Drops the table of `table`: its next use makes a new, empty one. */
  forget(table: Pick<WeakTable<object, unknown>, "id">): void {
    this.#tables[table.id] = undefined;
  }

  /** The counters of every table made so far, by name. */
  memoStats(): MemoStats[] {
    const stats: MemoStats[] = [];
    for (const table of this.#tables) {
      if (table === undefined) continue;
      const { name } = table;
      if ("object" in table) {
        const { entries = 0, hits = 0, misses = 0 } = table.object as Partial<MemoCounters>;
        stats.push({ name, kind: "object", entries, hits, misses });
      } else if (table.map instanceof CountedWeakMap) {
        const { added, hits, misses } = table.map;
        stats.push({ name, kind: "weak", entries: added, hits, misses });
      } else {
        const { size, hits, misses } = table.map;
        stats.push({ name, kind: "map", entries: size, hits, misses });
      }
    }
    return stats.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
