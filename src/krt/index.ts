// Incremental collections in the manner of Istio's krt: transforms read other collections only
// through ctx.fetch, which records what they read, so a change recomputes only the outputs that
// could see it, and an output equal to the previous one emits nothing.

export type { CollectionOptions, Event, Unregister } from "./collection.ts";
export { Collection, latest } from "./collection.ts";
export type { CollectionDebug } from "./debug.ts";
export { DebugRegistry } from "./debug.ts";
export { DerivedCollection, derive, deriveMany } from "./derived.ts";
export type { FetchFilter } from "./fetch.ts";
export { FetchContext } from "./fetch.ts";
export { Index, index } from "./indexes.ts";
export type { JoinOptions } from "./join.ts";
export { JoinCollection, join } from "./join.ts";
export type { SingletonOptions } from "./singleton.ts";
export { Singleton, StaticSingleton, singleton, staticSingleton } from "./singleton.ts";
export { StaticCollection } from "./static.ts";
export type { Labels } from "./traits.ts";
export { labelsContain } from "./traits.ts";
