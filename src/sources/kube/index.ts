export type { BackoffOptions } from "./backoff.ts";
export {
  ISTIOCTL_USER_AGENT,
  inCluster,
  istioUserAgent,
  KubeApiError,
  KubeClient,
  type KubeClientOptions,
  loadKubeConfig,
  type OpenWatch,
  PILOT_DISCOVERY_USER_AGENT,
} from "./client.ts";
export {
  type ConfigMapKeysWatch,
  type ConfigMapTexts,
  readConfigMapKeys,
  watchConfigMapKeys,
} from "./configmap-key.ts";
export { Informer, type InformerHandler, type InformerOptions, type WatchEventType } from "./informer.ts";
export { type LabelSelector, selectorMatches } from "./labels.ts";
export { KubeEventMetrics } from "./metrics.ts";
export type { MirrorEvent } from "./mirror.ts";
export { groupVersion, resourcePath } from "./paths.ts";
export { type JsonPatchOperation, KubeSource, type KubeSourceOptions } from "./source.ts";
