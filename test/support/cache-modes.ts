// The golden tests run every case with the xDS cache on and off (PILOT_ENABLE_XDS_CACHE=false): both
// must give the recorded bytes. With the cache on, the case is built on the template's push and again
// on the push after it (nothing changed), which takes its resources from the cache.
import assert from "node:assert/strict";
import type { Message } from "@bufbuild/protobuf";
import { BENCH_MESH, DOMAIN_SUFFIX, templateState } from "../../bench/templates.ts";
import type { ConfigObject } from "../../src/config/index.ts";
import { XdsCache } from "../../src/configgen/index.ts";
import type { MeshPush, PushFeatures } from "../../src/model/index.ts";
import { storePush } from "../../src/model/store-push.ts";
import type { EndpointLookup } from "../../src/registry/index.ts";
import { goldenDigest } from "./golden-digest.ts";

export interface CacheMode {
  name: string;
  features: PushFeatures;
}

export const CACHE_MODES: readonly CacheMode[] = [
  { name: "cache on", features: {} },
  { name: "cache off", features: { xdsCache: false } },
];

/** What a golden case builds from one push. */
export type GoldenBuild = (push: MeshPush, endpoints: EndpointLookup, cache: XdsCache) => Record<string, Message[]>;

/**
 * The digests of what `build` makes from the template's push, in `mode`: built on the first push and on
 * the push after it with one XdsCache, which must give the same bytes; with the cache on the second
 * build must be served by the resource caches, with it off nothing may be cached.
 */
export function cacheModeDigests(
  what: string,
  objects: readonly ConfigObject[],
  mode: CacheMode,
  build: GoldenBuild,
): Record<string, string> {
  const state = templateState(objects, mode.features);
  const cache = new XdsCache();
  const digests = (push: MeshPush) =>
    Object.fromEntries(
      Object.entries(build(push, state.registry, cache)).map(([type, messages]) => [
        type,
        goldenDigest(messages, `${what} ${type} (${mode.name})`),
      ]),
    );
  const first = digests(state.push);
  const hitsBefore = resourceHits(cache);
  const next = storePush(state.store, state.registry, BENCH_MESH, DOMAIN_SUFFIX, state.push, mode.features);
  assert.deepEqual(digests(next), first, `${mode.name}: the next push gives the same bytes`);
  if (mode.features.xdsCache === false) assert.equal(cache.entries().length, 0, "nothing cached");
  // (Routers' listeners are built per push, uncached.)
  else if (cache.entries().length > 0) assert.ok(resourceHits(cache) > hitsBefore, "the next push used the cache");
  return first;
}

function resourceHits(cache: XdsCache): number {
  return cache.stats().resources.reduce((sum, r) => sum + r.hits, 0);
}
