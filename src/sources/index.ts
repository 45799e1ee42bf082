// Config sources and the store they write into. Other folders import sources through this file.
//
//   const store = new ConfigStore({ sourceOrder: ["file", "kubernetes"], metrics: registry });
//   await new FileSource({ dir: "config/", store }).start();           // watched from then on
//   new MemorySource(store).apply(obj);                                 // tests: same validation path
//   await new XdsSource({ address: "sluiced-0:15010", writer: store, namespace: "istio-system" }).start();
//   const services = store.collection(kindKey("", "Service"));          // krt input, keys "ns/name"
//   store.onChange((events) => pushQueue.add(events));                  // one batch per change
//   store.get({ kindKey, namespace, name })?.resourceVersion;           // store-wide, monotonic
//   store.problems();                                                   // for /debug/configz
export {
  DEFAULT_MAX_FILE_BYTES,
  FileSource,
  type FileSourceOptions,
  type TextFileWatch,
  watchTextFile,
} from "./file/index.ts";
// The Kubernetes source is imported from "./kube/index.ts": it brings in the Kubernetes client, which
// sluiced loads only when it has a cluster.
export type { JsonPatchOperation, KubeSourceOptions, LabelSelector } from "./kube/index.ts";
export { MemorySource } from "./memory.ts";
export {
  CONFIG_PROBLEMS_METRIC,
  ConfigStore,
  type ConfigStoreOptions,
  type StoredConfig,
  type StoreProblem,
} from "./store.ts";
export { type Admission, admitObject, DEFAULT_NAMESPACE, describeIssue } from "./store-admit.ts";
export type { ConfigEvent, ConfigEventType, ConfigWriter, SourceProblem } from "./types.ts";
export { XdsSource, type XdsSourceOptions, type XdsSourceTls } from "./xds/index.ts";
