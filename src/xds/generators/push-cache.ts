// Caches of built resources (Istio's XDS cache): a value is built once per key, then the same object
// goes to every proxy whose key matches (the encoder encodes each object once), in this push and in
// later ones. A key holds everything the build reads: the proxy fields it depends on as text, and the
// input objects by identity: config, services and endpoint lists keep their identity while unchanged
// (the store, krt and the push snapshot keep them), so a push after a change rebuilds exactly what the
// change reached. An entry whose input object is gone can never be asked for again and is dropped.
// Every cache registers in `xdsCaches`, which /debug/cachez lists and clears. PILOT_ENABLE_XDS_CACHE=false
// turns them off: each value is built for its proxy and kept nowhere.
import type { MeshPush } from "../../model/index.ts";
import { PushStatus } from "../../model/index.ts";
import { encodeResource } from "../encode.ts";
import type { XdsResource } from "../generator.ts";

/** One cached resource, as /debug/cachez shows it. */
export interface CacheEntry {
  typeUrl: string;
  name: string;
  resource: XdsResource["resource"];
  /** Its encoded size. */
  bytes(): number;
}

export interface XdsCaches {
  /** The resources cached. */
  entries(): CacheEntry[];
  /** Empties the caches; the next request rebuilds. */
  clear(): void;
}

interface RegisteredCache {
  entries(): CacheEntry[];
  clear(): void;
}

const registered: RegisteredCache[] = [];

/** Every resource cache of the process. */
export const xdsCaches: XdsCaches = {
  entries: () => registered.flatMap((c) => c.entries()),
  clear: () => {
    for (const c of registered) c.clear();
  },
};

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
 * The value for `key` and `inputs` (every object the build reads that `key` does not describe: snapshot
 * indexes, services, rules, endpoint lists, the mesh config), else `build`'s. The build reports into the
 * status it is given, which goes into the push's status now and into each later push reusing the value.
 */
export type ResourceCache<T> = (
  push: MeshPush,
  key: string,
  inputs: readonly (object | undefined)[],
  build: (status: PushStatus) => T,
) => T;

/** A cache of `typeUrl` resources; `resources` says which resources a value holds (it may hold several, or none). */
export function resourceCache<T>(typeUrl: string, resources: (value: T) => readonly XdsResource[]): ResourceCache<T> {
  // Map order is recency order: a use by a new push moves the entry last, the first is the least recently used.
  const entries = new Map<string, Entry<T>>();
  let latestVersion = "";
  registered.push({
    entries: () =>
      [...entries.values()].flatMap(({ value }) =>
        resources(value).map((r) => ({
          typeUrl,
          name: r.name,
          resource: r.resource,
          bytes: () => encodeResource(r).any.length,
        })),
      ),
    clear: () => entries.clear(),
  });
  return (push, key, inputs, build) => {
    // Nothing kept: the build reports straight into the push's status.
    if (!push.snapshot.xdsCache) return build(push.status);
    if (push.version !== latestVersion) {
      latestVersion = push.version;
      dropUnreachable(entries);
    }
    let fullKey = `${key}|`;
    for (const input of inputs) fullKey += `${objectId(input)},`;
    const entry = entries.get(fullKey);
    if (entry?.version === push.version) return entry.value;
    entries.delete(fullKey);
    if (entry) {
      push.status.merge(entry.status);
      entries.set(fullKey, { ...entry, version: push.version });
      return entry.value;
    }
    const status = new PushStatus();
    const value = build(status);
    push.status.merge(status);
    const refs: WeakRef<object>[] = [];
    for (const input of inputs) if (input !== undefined && !isEmptyArray(input)) refs.push(weakRefOf(input));
    entries.set(fullKey, { value, inputs: refs, status, version: push.version });
    if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
    return value;
  };
}

/** Drops the entries one of whose input objects was collected: their keys name an identity that is gone. */
function dropUnreachable(entries: Map<string, Entry<unknown>>): void {
  for (const [key, entry] of entries) {
    if (entry.inputs.some((ref) => ref.deref() === undefined)) entries.delete(key);
  }
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

const identities = new WeakMap<object, InputIdentity>();
let lastObjectId = 0;

function identityOf(input: object): InputIdentity {
  let identity = identities.get(input);
  if (identity === undefined) {
    identity = { id: String(++lastObjectId), ref: undefined };
    identities.set(input, identity);
  }
  return identity;
}

function weakRefOf(input: object): WeakRef<object> {
  const identity = identityOf(input);
  identity.ref ??= new WeakRef(input);
  return identity.ref;
}

function isEmptyArray(input: unknown): boolean {
  return Array.isArray(input) && input.length === 0;
}

/**
 * An input's identity in a key: a number per object for as long as it lives; "-" for undefined; "[]"
 * for any empty list (lookups return new empty lists, all meaning the same).
 */
export function objectId(input: object | undefined): string {
  if (input === undefined) return "-";
  if (isEmptyArray(input)) return "[]";
  return identityOf(input).id;
}
