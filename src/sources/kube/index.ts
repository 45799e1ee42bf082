export type { BackoffOptions } from "./backoff.ts";
export { inCluster, KubeApiError, KubeClient, loadKubeConfig, type OpenWatch } from "./client.ts";
export {
  type ConfigMapKeysWatch,
  type ConfigMapTexts,
  readConfigMapKeys,
  watchConfigMapKeys,
} from "./configmap-key.ts";
export { Informer, type InformerHandler, type InformerOptions, type WatchEventType } from "./informer.ts";
export type { LabelSelector } from "./labels.ts";
export { KubeEventMetrics } from "./metrics.ts";
export type { MirrorEvent } from "./mirror.ts";
export { groupVersion, resourcePath } from "./paths.ts";
export { type JsonPatchOperation, KubeSource, type KubeSourceOptions } from "./source.ts";
