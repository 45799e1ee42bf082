// Incremental collections in the manner of Istio's krt. Transforms read other collections only
// through ctx.fetch, which records what they read, so a change recomputes only the outputs that
// could see it, and an output equal to the previous one emits nothing.
//
//   const pods = new StaticCollection<Pod>();      // fed by a source: upsert, delete, update, reset
//   const nodes = new StaticCollection<Node>();
//   const workloads = derive(pods, (ctx, pod) => ({
//     name: pod.metadata.name,
//     // Reruns for this pod only when this node changes (or appears, or goes).
//     zone: ctx.fetchOne(nodes, { key: pod.spec.nodeName })?.metadata.labels?.[ZONE],
//   }), { keyOf: (w) => w.name });
//   const slicesByService = index(slices, (s) => [serviceKeyOf(s)]);
//   const endpoints = derive(services, (ctx, svc) => ({
//     service: keyOf(svc),
//     slices: ctx.fetchIndex(slicesByService, keyOf(svc)),                          // by index key
//     pods: ctx.fetch(pods, { namespace: ns(svc), labels: svc.spec.selector }),    // by namespace, then labels
//   }), { keyOf: (e) => e.service });
//   const push = singleton((ctx) => buildPushContext(ctx.fetch(services), ctx.fetch(endpoints)));
//
// Everything is synchronous: when a source update returns, every derived collection has recomputed
// (in creation order, so each sees its upstreams settled) and every handler has been called.
// batch(() => ...) applies several source updates as one change.

export type { CollectionOptions, Event, Unregister } from "./collection.ts";
export { Collection, Index, latest } from "./collection.ts";
export type { CollectionDebug } from "./debug.ts";
export { DebugRegistry } from "./debug.ts";
export { DerivedCollection, derive, deriveMany } from "./derived.ts";
export type { FetchFilter } from "./fetch.ts";
export { FetchContext } from "./fetch.ts";
export { index } from "./indexes.ts";
export type { JoinOptions } from "./join.ts";
export { JoinCollection, join } from "./join.ts";
export { batch } from "./scheduler.ts";
export type { SingletonOptions } from "./singleton.ts";
export { Singleton, StaticSingleton, singleton, staticSingleton } from "./singleton.ts";
export { StaticCollection } from "./static.ts";
export type { Labels } from "./traits.ts";
export { labelsContain } from "./traits.ts";
