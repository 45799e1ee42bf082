// The control plane's state from config files, without a server: config store → service registry →
// push context, as sluiced builds it. `sluice x translate` reads proxies' config from it.
import { readConfigPaths } from "../config/decode.ts";
import { kindKey, type MeshConfig } from "../config/index.ts";
import { buildPushContext, type PushContext } from "../model/index.ts";
import { ServiceRegistry } from "../registry/index.ts";
import { ConfigStore, MemorySource } from "../sources/index.ts";
import { describeIssue } from "../sources/store-admit.ts";

/** The service registry over the store's collections (Services, EndpointSlices, Pods, ServiceEntries, ...). */
export function storeRegistry(store: ConfigStore, mesh: MeshConfig, domainSuffix: string): ServiceRegistry {
  const kind = (group: string, name: string) => store.collection(kindKey(group, name));
  return new ServiceRegistry(
    {
      services: kind("", "Service"),
      endpointSlices: kind("discovery.k8s.io", "EndpointSlice"),
      endpoints: kind("", "Endpoints"),
      pods: kind("", "Pod"),
      nodes: kind("", "Node"),
      serviceEntries: kind("networking.istio.io", "ServiceEntry"),
      workloadEntries: kind("networking.istio.io", "WorkloadEntry"),
      workloadGroups: kind("networking.istio.io", "WorkloadGroup"),
    },
    { domainSuffix, mesh },
  );
}

/** The push context over what the store holds now. */
export function storePush(
  store: ConfigStore,
  registry: ServiceRegistry,
  mesh: MeshConfig,
  domainSuffix: string,
  previous?: PushContext,
): PushContext {
  return buildPushContext(
    { configs: store.list().map((s) => s.object), services: registry.services.list(), mesh, domainSuffix },
    previous,
  );
}

export interface TranslateState {
  store: ConfigStore;
  registry: ServiceRegistry;
  push: PushContext;
}

/** The state of `paths` (files or directories); the problems instead when a document does not decode or validate. */
export function loadState(
  paths: string[],
  mesh: MeshConfig,
  domainSuffix: string,
): { state: TranslateState; problems?: undefined } | { problems: string[]; state?: undefined } {
  const store = new ConfigStore();
  const memory = new MemorySource(store, "file");
  const problems: string[] = [];
  for (const doc of readConfigPaths(paths)) {
    const where = `${doc.position.file}:${doc.position.line}`;
    if (doc.error !== undefined || !doc.object) {
      problems.push(`${where}: ${doc.error ?? "empty document"}`);
      continue;
    }
    for (const issue of memory.apply(doc.object).errors) problems.push(`${where}: ${describeIssue(issue)}`);
  }
  if (problems.length > 0) return { problems };
  const registry = storeRegistry(store, mesh, domainSuffix);
  return { state: { store, registry, push: storePush(store, registry, mesh, domainSuffix) } };
}
