import type { Collection, CollectionOptions, Event, Index } from "./collection.ts";
import { latest } from "./collection.ts";
import { ComputedCollection } from "./computed.ts";
import type { Bucket, Dependency } from "./fetch.ts";
import { FetchContext } from "./fetch.ts";
import { settle } from "./scheduler.ts";

/** What one input produced last time, and what it fetched to produce it. */
interface InputState<O> {
  outputs: Map<string, O>;
  dependencies: readonly Dependency<unknown>[];
}

/** For one fetched collection: which inputs to recompute when one of its objects changes. */
class Routes {
  readonly byKey = new Map<string, Set<string>>();
  readonly byIndex = new Map<Index<unknown>, Map<string, Set<string>>>();
  /** Inputs whose fetch has no key or index: every change is checked against their filter. */
  readonly unbucketed = new Set<string>();

  add(inputKey: string, bucket: Bucket<unknown>): void {
    if (bucket.kind === "all") this.unbucketed.add(inputKey);
    else if (bucket.kind === "keys") for (const key of bucket.keys) addTo(this.byKey, key, inputKey);
    else addTo(this.indexRoutes(bucket.index), bucket.key, inputKey);
  }

  remove(inputKey: string, bucket: Bucket<unknown>): void {
    if (bucket.kind === "all") this.unbucketed.delete(inputKey);
    else if (bucket.kind === "keys") for (const key of bucket.keys) removeFrom(this.byKey, key, inputKey);
    else removeFrom(this.indexRoutes(bucket.index), bucket.key, inputKey);
  }

  /** Calls `visit` with each input that may have fetched `item`; each still has to pass its own filter. */
  forCandidates(objectKey: string, item: unknown, visit: (inputKey: string) => void): void {
    this.byKey.get(objectKey)?.forEach(visit);
    for (const [index, routes] of this.byIndex) {
      for (const key of index.extract(item)) routes.get(key)?.forEach(visit);
    }
    this.unbucketed.forEach(visit);
  }

  private indexRoutes(index: Index<unknown>): Map<string, Set<string>> {
    let routes = this.byIndex.get(index);
    if (!routes) {
      routes = new Map();
      this.byIndex.set(index, routes);
    }
    return routes;
  }
}

/** Whether two fetches route changes the same way: the same collection, the same bucket. */
function sameRoute(a: Dependency<unknown> | undefined, b: Dependency<unknown> | undefined): boolean {
  if (!a || !b || a.collection !== b.collection) return false;
  const x = a.bucket;
  const y = b.bucket;
  if (x.kind === "all") return y.kind === "all";
  if (x.kind === "index") return y.kind === "index" && x.index === y.index && x.key === y.key;
  if (y.kind !== "keys" || x.keys.length !== y.keys.length) return false;
  for (let i = 0; i < x.keys.length; i++) if (x.keys[i] !== y.keys[i]) return false;
  return true;
}

function addTo(map: Map<string, Set<string>>, key: string, value: string): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(value);
}

function removeFrom(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key);
  set?.delete(value);
  if (set?.size === 0) map.delete(key);
}

/**
 * Outputs computed from each object of an input collection. The transform reruns for an input when
 * the input object changes or when something it fetched changes; outputs equal to the previous ones
 * emit nothing. Two inputs producing the same output key: the one that produced it first wins, and
 * the next takes over when it stops.
 */
export class DerivedCollection<I, O> extends ComputedCollection<O> {
  private readonly states = new Map<string, InputState<O>>();
  /** Output key → the inputs producing it, earliest first. */
  private readonly producers = new Map<string, string[]>();
  private readonly upstreams = new Map<Collection<unknown>, Routes>();

  constructor(
    private readonly input: Collection<I>,
    private readonly transform: (ctx: FetchContext, item: I) => readonly O[],
    options: CollectionOptions<O> = {},
  ) {
    super("derived", options);
    input.registerBatch((events) => {
      for (const event of events) this.markPending(input.keyOf(latest(event)));
    }, true);
    settle();
  }

  protected dependencyNames(): string[] {
    return [this.input.name, ...[...this.upstreams.keys()].map((c) => c.name)];
  }

  private onUpstream<U>(collection: Collection<U>, routes: Routes, events: readonly Event<U>[]): void {
    const check = (item: U, inputKey: string): void => {
      if (this.isPending(inputKey)) return;
      const dependencies = this.states.get(inputKey)?.dependencies ?? [];
      if (dependencies.some((d) => d.collection === collection && d.matches(item))) this.markPending(inputKey);
    };
    for (const event of events) {
      const objectKey = collection.keyOf(latest(event));
      const { old: before, new: after } = event;
      if (before !== undefined) routes.forCandidates(objectKey, before, (inputKey) => check(before, inputKey));
      if (after !== undefined) routes.forCandidates(objectKey, after, (inputKey) => check(after, inputKey));
    }
  }

  protected recompute(inputKeys: ReadonlySet<string>): void {
    const touched = new Set<string>();
    for (const inputKey of inputKeys) {
      const before = this.states.get(inputKey);
      const item = this.input.get(inputKey);
      const after = item === undefined ? undefined : this.run(inputKey, item, before);
      this.reroute(inputKey, before?.dependencies ?? [], after?.dependencies ?? []);
      if (after) this.states.set(inputKey, after);
      else this.states.delete(inputKey);
      this.trackProducers(inputKey, before?.outputs, after?.outputs, touched);
    }
    const events: Event<O>[] = [];
    for (const outputKey of touched) {
      const event = this.diff(outputKey, this.visible(outputKey));
      if (event) events.push(event);
    }
    this.commit(events);
  }

  private run(inputKey: string, item: I, previous: InputState<O> | undefined): InputState<O> {
    const ctx = new FetchContext();
    this.recomputes += 1;
    try {
      const outputs = new Map<string, O>();
      for (const output of this.transform(ctx, item)) {
        const key = this.keyOf(output);
        if (!outputs.has(key)) outputs.set(key, output);
      }
      return { outputs, dependencies: ctx.dependencies };
    } catch (error) {
      this.recordError(inputKey, error);
      // Keep the last good outputs; rerun when anything the failed run read changes.
      return { outputs: previous?.outputs ?? new Map(), dependencies: ctx.dependencies };
    }
  }

  /**
   * Moves an input's routes from what its last run fetched to what this one did. A rerun mostly fetches
   * what it fetched before, in the same order: those routes stay as they are (removing and adding them
   * again was a third of a Pod change's cost in the ambient index).
   */
  private reroute(
    inputKey: string,
    before: readonly Dependency<unknown>[],
    after: readonly Dependency<unknown>[],
  ): void {
    let same = 0;
    while (same < before.length && same < after.length && sameRoute(before[same], after[same])) same++;
    // A route this run no longer takes goes (one it takes again at another place stays), then the new ones come.
    for (let i = same; i < before.length; i++) {
      const dependency = before[i] as Dependency<unknown>;
      if (after.some((d) => sameRoute(d, dependency))) continue;
      this.routesFor(dependency.collection).remove(inputKey, dependency.bucket);
    }
    for (let i = same; i < after.length; i++) {
      const dependency = after[i] as Dependency<unknown>;
      this.routesFor(dependency.collection).add(inputKey, dependency.bucket);
    }
  }

  private routesFor(collection: Collection<unknown>): Routes {
    let routes = this.upstreams.get(collection);
    if (!routes) {
      const created = new Routes();
      // Registered on first fetch; the state fetched so far is already reflected in the outputs.
      collection.registerBatch((events) => this.onUpstream(collection, created, events), false);
      this.upstreams.set(collection, created);
      routes = created;
    }
    return routes;
  }

  private trackProducers(
    inputKey: string,
    before: ReadonlyMap<string, O> | undefined,
    after: ReadonlyMap<string, O> | undefined,
    touched: Set<string>,
  ): void {
    for (const outputKey of before?.keys() ?? []) {
      touched.add(outputKey);
      if (after?.has(outputKey)) continue;
      const producers = this.producers.get(outputKey) ?? [];
      producers.splice(producers.indexOf(inputKey), 1);
      if (producers.length === 0) this.producers.delete(outputKey);
    }
    for (const outputKey of after?.keys() ?? []) {
      touched.add(outputKey);
      if (before?.has(outputKey)) continue;
      const producers = this.producers.get(outputKey);
      if (producers) producers.push(inputKey);
      else this.producers.set(outputKey, [inputKey]);
    }
  }

  private visible(outputKey: string): O | undefined {
    const producer = this.producers.get(outputKey)?.[0];
    return producer === undefined ? undefined : this.states.get(producer)?.outputs.get(outputKey);
  }
}

/** One output (or none, for undefined) per input object. */
export function derive<I, O>(
  input: Collection<I>,
  transform: (ctx: FetchContext, item: I) => O | undefined,
  options?: CollectionOptions<O>,
): Collection<O> {
  return new DerivedCollection(
    input,
    (ctx, item) => {
      const output = transform(ctx, item);
      return output === undefined ? [] : [output];
    },
    options,
  );
}

/** Any number of outputs per input object. */
export function deriveMany<I, O>(
  input: Collection<I>,
  transform: (ctx: FetchContext, item: I) => readonly O[],
  options?: CollectionOptions<O>,
): Collection<O> {
  return new DerivedCollection(input, transform, options);
}
