// Config sources and the store they write into. Other folders import sources through this file.
export { FileSource, type FileSourceOptions } from "./file/index.ts";
export { KubeSource, type KubeSourceOptions, type LabelSelector, loadKubeConfig } from "./kube/index.ts";
export { MemorySource } from "./memory.ts";
export {
  CONFIG_PROBLEMS_METRIC,
  ConfigStore,
  type ConfigStoreOptions,
  collectionKeyOf,
  kindKeyOf,
  objectKeyOf,
  type StoredConfig,
  type StoreProblem,
} from "./store.ts";
export { type Admission, admitObject, DEFAULT_NAMESPACE } from "./store-admit.ts";
export type { ConfigEvent, ConfigEventType, ConfigWriter, ObjectKey, SourceProblem } from "./types.ts";
