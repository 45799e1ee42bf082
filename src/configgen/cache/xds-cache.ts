// The xDS cache (Istio's XdsCache), one object owned by the discovery server and passed down to the
// generators, config generation and the builders: nothing generated is kept in a module.
//
// It holds two kinds of tables:
// - Resource caches: a built value (a cluster list, a listener list, a route configuration, a load
//   assignment) is built once per key, then the same object goes to every proxy whose key matches (the
//   encoder encodes each object once), in this push and in later ones. A key (keys.ts) holds everything
//   the build reads: the proxy fields it depends on by value, and the input objects by identity: config,
//   services and endpoint lists keep their identity while unchanged (the store, krt and the push snapshot
//   keep them), so a push after a change rebuilds exactly what the change reached. An entry whose input
//   object is gone can never be asked for again and is dropped. PILOT_ENABLE_XDS_CACHE=false turns them
//   off: each value is built for its proxy and kept nowhere. A table of per-workload values (shared
//   only by one workload's pods, which connect together) says `dropAtRest`: its values go once the
//   server has been quiet (dropAtRest()), as istiod keeps no listeners at all.
// - Memo tables (util/memo.ts, as a MemoStore): what the pure builders and the generators keep per
//   input object (route matches per VirtualService match, LbEndpoints per registry endpoint, ...).
//
// /debug/cachez lists the resources cached, clears the resource caches, and (`?stats=true`) shows every
// table's size, hits and misses.
import type { MeshPush } from "../../model/index.ts";
import { PushStatus } from "../../model/index.ts";
import { type MemoStats, MemoStore, type Memos } from "../../util/index.ts";
import type { XdsResource } from "../resource.ts";
import { KeyFormat, type KeySchema, type ObjectIds } from "./keys.ts";

/** One cached resource, as /debug/cachez shows it. */
export interface CacheEntry {
  typeUrl: string;
  name: string;
  resource: XdsResource["resource"];
}

/** One resource cache's counters. */
export interface ResourceCacheStats {
  name: string;
  typeUrl: string;
  /** Values held. */
  entries: number;
  /** Lookups answered from the cache (in this push or a later one). */
  hits: number;
  /** Lookups that built. */
  misses: number;
}

/** Every table's counters, as /debug/cachez?stats=true shows them. */
export interface XdsCacheStats {
  resources: ResourceCacheStats[];
  memos: MemoStats[];
}

/** What /debug/cachez reads of the cache (its memo tables hold each resource's encoding). */
export interface XdsCaches extends Memos {
  /** The resources cached. */
  entries(): CacheEntry[];
  /** Empties the resource caches; the next request rebuilds. */
  clear(): void;
  /** Each table's size, hits and misses. */
  stats(): XdsCacheStats;
}

let lastResourceTableId = 0;

/** A resource cache as its generator declares it: a descriptor holding nothing. */
export interface ResourceTable<T, K> {
  readonly id: number;
  /** The cache's name on /debug/cachez?stats=true. */
  readonly name: string;
  readonly typeUrl: string;
  readonly key: KeyFormat<K>;
  /** The resources a value holds (it may hold several, or none). */
  readonly resources: (value: T) => readonly XdsResource[];
  /** Values kept only while the server is busy (see dropAtRest). */
  readonly dropAtRest: boolean;
}

/** Declares a resource cache of `typeUrl` resources whose keys are `K` structs written by `key`. */
export function resourceTable<T, K>(spec: {
  name: string;
  typeUrl: string;
  key: KeySchema<K>;
  resources: (value: T) => readonly XdsResource[];
  dropAtRest?: boolean;
}): ResourceTable<T, K> {
  return Object.freeze({
    ...spec,
    id: lastResourceTableId++,
    key: new KeyFormat(spec.key),
    dropAtRest: spec.dropAtRest ?? false,
  });
}

/** The most values one cache keeps; the least recently used go first (Istio's XDS cache is an LRU too). */
const MAX_ENTRIES = 20_000;

interface Entry<T> {
  value: T;
  /** The input objects, to drop the entry once one is gone. */
  inputs: readonly WeakRef<object>[];
  /** What its build reported; a later push reusing the value reports it again. */
  status: PushStatus;
  /** The version of the last push that used it. */
  version: string;
}

/**
 * An input object's number in keys, and one weak reference to it that every entry naming it shares,
 * made when an entry first names it: a WeakRef keeps its target alive to the end of the current job,
 * and keys made without caching (per-push keys, the cache turned off) need none.
 */
interface InputIdentity {
  id: string;
  ref: WeakRef<object> | undefined;
}

function isEmptyArray(input: unknown): boolean {
  return Array.isArray(input) && input.length === 0;
}

/** One resource cache of an XdsCache. */
export class ResourceCache<T, K> {
  // Map order is recency order: a use by a new push moves the entry last, the first is the least recently used.
  readonly #entries = new Map<string, Entry<T>>();
  #latestVersion = "";
  /** The owner's count of collected inputs when the entries were last scanned for them. */
  #scannedCollections = 0;
  hits = 0;
  misses = 0;

  constructor(
    readonly table: ResourceTable<T, K>,
    readonly owner: XdsCache,
  ) {}

  /**
   * The value for `key` (every input the build reads: proxy fields by value, snapshot indexes, services,
   * rules, endpoint lists and the mesh config by identity), else `build`'s. The build reports into the
   * status it is given, which goes into the push's status now and into each later push reusing the value.
   */
  get(push: MeshPush, key: K, build: (status: PushStatus) => T): T {
    // Nothing kept: the build reports straight into the push's status.
    if (!push.snapshot.xdsCache) return build(push.status);
    const entries = this.#entries;
    if (push.version !== this.#latestVersion) {
      this.#latestVersion = push.version;
      // Scanning every entry (and dereferencing each input, which keeps it alive to the end of the
      // job) is worth it only once an input was collected: an endpoint push otherwise scanned the
      // whole EDS cache before its first response.
      if (this.#scannedCollections !== this.owner.collectedInputs) {
        this.#scannedCollections = this.owner.collectedInputs;
        dropUnreachable(entries);
      }
    }
    const fullKey = this.table.key.text(key, this.owner);
    const entry = entries.get(fullKey);
    if (entry?.version === push.version) {
      this.hits++;
      return entry.value;
    }
    entries.delete(fullKey);
    if (entry) {
      this.hits++;
      push.status.merge(entry.status);
      entries.set(fullKey, { ...entry, version: push.version });
      return entry.value;
    }
    this.misses++;
    const status = new PushStatus();
    const value = build(status);
    push.status.merge(status);
    const refs: WeakRef<object>[] = [];
    for (const input of this.table.key.objects(key)) {
      if (input !== undefined && !isEmptyArray(input)) refs.push(this.owner.weakRefOf(input));
    }
    entries.set(fullKey, { value, inputs: refs, status, version: push.version });
    if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
    return value;
  }

  entries(): CacheEntry[] {
    const { typeUrl, resources } = this.table;
    return [...this.#entries.values()].flatMap(({ value }) =>
      resources(value).map((r) => ({ typeUrl, name: r.name, resource: r.resource })),
    );
  }

  stats(): ResourceCacheStats {
    const { name, typeUrl } = this.table;
    return { name, typeUrl, entries: this.#entries.size, hits: this.hits, misses: this.misses };
  }

  clear(): void {
    this.#entries.clear();
  }
}

/** Drops the entries one of whose input objects was collected: their keys name an identity that is gone. */
function dropUnreachable(entries: Map<string, Entry<unknown>>): void {
  for (const [key, entry] of entries) {
    if (entry.inputs.some((ref) => ref.deref() === undefined)) entries.delete(key);
  }
}

/** The xDS cache: resource caches and memo tables, made on first use; see the top of this file. */
export class XdsCache extends MemoStore implements XdsCaches, ObjectIds {
  readonly #resourceCaches: (ResourceCache<unknown, unknown> | undefined)[] = [];
  readonly #identities = new WeakMap<object, InputIdentity>();
  #lastObjectId = 0;
  /** Counts the input objects collected (those an entry named), so the caches know when to look. */
  readonly #collections = new FinalizationRegistry<undefined>(() => {
    this.#collectedInputs++;
  });
  #collectedInputs = 0;

  /** How many input objects named by entries have been collected so far. */
  get collectedInputs(): number {
    return this.#collectedInputs;
  }

  /** The resource cache of `table`. */
  resources<T, K>(table: ResourceTable<T, K>): ResourceCache<T, K> {
    let cache = this.#resourceCaches[table.id] as ResourceCache<T, K> | undefined;
    if (cache === undefined) {
      cache = new ResourceCache(table, this);
      this.#resourceCaches[table.id] = cache as ResourceCache<unknown, unknown>;
    }
    return cache;
  }

  entries(): CacheEntry[] {
    return this.#caches().flatMap((c) => c.entries());
  }

  clear(): void {
    for (const c of this.#caches()) c.clear();
  }

  /**
   * Empties the tables of per-workload values (`dropAtRest`), for when the server has been quiet: a
   * workload's pods connect and are pushed together, so these values are shared within a burst, and
   * kept at rest they cost more memory than they save work (~40 MiB of listeners for 1,000 workloads).
   */
  dropAtRest(): void {
    for (const c of this.#caches()) if (c.table.dropAtRest) c.clear();
  }

  stats(): XdsCacheStats {
    const resources = this.#caches().map((c) => c.stats());
    resources.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { resources, memos: this.memoStats() };
  }

  #caches(): ResourceCache<unknown, unknown>[] {
    return this.#resourceCaches.filter((c) => c !== undefined);
  }

  #identityOf(input: object): InputIdentity {
    let identity = this.#identities.get(input);
    if (identity === undefined) {
      identity = { id: String(++this.#lastObjectId), ref: undefined };
      this.#identities.set(input, identity);
    }
    return identity;
  }

  /** One weak reference to `input`, shared by every entry naming it. */
  weakRefOf(input: object): WeakRef<object> {
    const identity = this.#identityOf(input);
    if (identity.ref === undefined) {
      identity.ref = new WeakRef(input);
      this.#collections.register(input, undefined);
    }
    return identity.ref;
  }

  /**
   * An input's identity in a key: a number per object for as long as it lives; "-" for undefined; "[]"
   * for any empty list (lookups return new empty lists, all meaning the same).
   */
  objectId(input: object | undefined): string {
    if (input === undefined) return "-";
    if (isEmptyArray(input)) return "[]";
    return this.#identityOf(input).id;
  }
}
