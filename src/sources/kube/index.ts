export type { BackoffOptions } from "./backoff.ts";
export { KubeApiError, loadKubeConfig } from "./client.ts";
export type { LabelSelector } from "./labels.ts";
export { KubeEventMetrics } from "./metrics.ts";
export type { MirrorEvent } from "./mirror.ts";
export { KubeSource, type KubeSourceOptions } from "./source.ts";
