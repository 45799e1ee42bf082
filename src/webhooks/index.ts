// Istio's admission webhooks: config validation and sidecar injection over HTTPS, and the same
// injection offline for `sluice kube-inject`.
export {
  type AdmissionRequest,
  type AdmissionResponse,
  decodeAdmissionReview,
  encodeAdmissionResponse,
} from "./admission.ts";
export {
  InjectionError,
  type InjectionRequest,
  type InjectionResult,
  injectPod,
  renderedTemplates,
  STATUS_ANNOTATION,
} from "./inject/inject.ts";
export {
  InjectionSettingsWatcher,
  type InjectionSettingsWatcherOptions,
  type InjectionTexts,
} from "./inject/injector-config.ts";
export { applyPatch, createPatch, type PatchOperation } from "./inject/jsonpatch.ts";
export {
  GATEWAY_MANAGED_LABEL,
  type GatewayTemplateInput,
  kubeGatewayObjects,
  type ServicePort,
} from "./inject/kube-gateway.ts";
export type { Pod } from "./inject/pod.ts";
export { injectRequired, webhookSelects } from "./inject/policy.ts";
export { effectiveProxyConfig } from "./inject/proxyconfig.ts";
export {
  DEFAULT_INJECTION_SETTINGS,
  DEFAULT_PROXY_TAG,
  detectNativeSidecar,
  type InjectionPolicy,
  type InjectionSettings,
  injectionSettingsFromValues,
  type NativeSidecarMode,
  nativeSidecarModeFromEnv,
} from "./inject/settings.ts";
export { TEMPLATES } from "./inject/templates.ts";
export { waypointObjects } from "./inject/waypoint.ts";
export { type KubeInjectOptions, kubeInjectObject, kubeInjectText } from "./kube-inject.ts";
export type { ValidationFailure } from "./metrics.ts";
export {
  MAX_REQUEST_BODY_BYTES,
  parseInjectEnvs,
  startWebhookServer,
  type WebhookServer,
  type WebhookServerOptions,
} from "./server.ts";
export { type ValidationOutcome, validateAdmission } from "./validate.ts";
