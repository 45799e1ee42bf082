// sluiced's discovery service over a config store, started in-process the way the end-to-end tests
// run it: the registry and every push built from the store, plaintext gRPC on 127.0.0.1.
import { pino } from "pino";
import { DEFAULT_MESH_CONFIG } from "../../src/config/index.ts";
import type { MeshPush, PushFeatures } from "../../src/model/index.ts";
import { storePush, storeRegistry } from "../../src/model/store-push.ts";
import type { ServiceRegistry } from "../../src/registry/index.ts";
import type { ConfigStore } from "../../src/sources/index.ts";
import { type Discovery, type DiscoveryOptions, startDiscovery } from "../../src/xds/index.ts";

const DOMAIN_SUFFIX = "cluster.local";

export interface StoreDiscoveryOptions {
  /** Default: the registry `storeRegistry` builds over the store. */
  registry?: ServiceRegistry;
  /** Default: `storePush` over the store and registry. */
  initialPush?: MeshPush;
  /** Default: 10 ms quiet, at most 200 ms. */
  debounce?: DiscoveryOptions["debounce"];
  /** Default: 127.0.0.1 on a port the system picks. */
  grpcAddr?: string;
  metrics?: DiscoveryOptions["metrics"];
  /** Feature flags of every push built (default none: each flag's default). */
  features?: PushFeatures;
}

export function startStoreDiscovery(store: ConfigStore, options: StoreDiscoveryOptions = {}): Promise<Discovery> {
  const mesh = DEFAULT_MESH_CONFIG;
  const registry = options.registry ?? storeRegistry(store, mesh, DOMAIN_SUFFIX);
  const build = (previous?: MeshPush) => storePush(store, registry, mesh, DOMAIN_SUFFIX, previous, options.features);
  return startDiscovery({
    store,
    initialPush: options.initialPush ?? build(),
    endpoints: registry,
    build,
    rootNamespace: "istio-system",
    domainSuffix: DOMAIN_SUFFIX,
    debounce: options.debounce ?? { afterMs: 10, maxMs: 200, edsDebounce: true },
    apiAuth: true,
    debugAuth: { systemNamespace: "istio-system" },
    plugins: [],
    listen: { grpcAddr: options.grpcAddr ?? "127.0.0.1:0" },
    metrics: options.metrics,
    log: pino({ level: "silent" }),
  });
}
