// What `sluice x convert` runs: the conversion of objects read from files, against the service registry
// sluiced would build from the same objects (Services, EndpointSlices, Pods, ServiceEntries, ...), so that
// gateway addresses and backend lookups give the statuses a cluster would.
import { type ConfigObject, DEFAULT_MESH_CONFIG, kindKeyOf } from "../config/index.ts";
import {
  type ConversionResult,
  type ConversionSettings,
  convertResources,
  registryServiceView,
  type ServiceLookup,
} from "../gatewayapi/index.ts";
import { REGISTRY_KINDS, storeRegistry } from "../model/store-push.ts";
import { ConfigStore, describeIssue, MemorySource } from "../sources/index.ts";

const REGISTRY_KIND_SET: ReadonlySet<string> = new Set(Object.values(REGISTRY_KINDS));

export interface FileRegistry {
  services: ServiceLookup;
  /** Objects the registry could not take (invalid), one line each. */
  problems: string[];
}

/** The registry's services over the registry kinds among `objects`, admitted as sluiced admits files. */
export function fileRegistry(objects: readonly ConfigObject[], domainSuffix: string): FileRegistry {
  const store = new ConfigStore();
  const memory = new MemorySource(store, "file");
  const problems: string[] = [];
  store.batch(() => {
    for (const object of objects) {
      if (!REGISTRY_KIND_SET.has(kindKeyOf(object))) continue;
      const { errors } = memory.apply(object);
      const name = `${object.kind} ${object.metadata.namespace ?? ""}/${object.metadata.name ?? ""}`;
      for (const issue of errors) problems.push(`${name} left out of the service registry: ${describeIssue(issue)}`);
    }
  });
  const view = registryServiceView(storeRegistry(store, DEFAULT_MESH_CONFIG, domainSuffix));
  return { services: { servicesByHostname: (hostname) => view.lookup(hostname) }, problems };
}

/** The conversion of `objects`, with the problems of the objects the registry left out. */
export function convertObjects(
  objects: readonly ConfigObject[],
  settings: ConversionSettings,
): { result: ConversionResult; problems: string[] } {
  const registry = fileRegistry(objects, settings.domainSuffix);
  return { result: convertResources(objects, settings, registry.services), problems: registry.problems };
}
