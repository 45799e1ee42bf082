// What the injector is configured with: the subset of Istio's Helm values (`values.global.*`,
// `sidecarInjectorWebhook.*`) and injector config (`policy`, `defaultTemplates`, ...) that the
// built-in templates read, with Istio's defaults.
import type { LabelSelector } from "../../sources/kube/labels.ts";

export type InjectionPolicy = "enabled" | "disabled";

export interface ResourceRequirements {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export interface InjectionSettings {
  /** Namespace policy when a pod says nothing: `enabled` injects, `disabled` only on request. */
  policy: InjectionPolicy;
  /** Pods whose labels match one of these are not injected unless they ask to be. */
  neverInjectSelector: LabelSelector[];
  /** Pods whose labels match one of these are injected unless they refuse (never wins). */
  alwaysInjectSelector: LabelSelector[];
  /** Templates used when the pod has no `inject.istio.io/templates` annotation. */
  defaultTemplates: string[];
  /** Added to every injected pod (Istio's injectedAnnotations). */
  injectedAnnotations: Record<string, string>;
  /** The control plane's revision ("" is the default revision). */
  revision: string;
  /** ENABLE_NATIVE_SIDECARS: the proxy as an init container with restartPolicy Always. */
  nativeSidecars: boolean;
  hub: string;
  tag: string;
  /** Image name under `hub` ("proxyv2"), or a full reference when it contains "/". */
  proxyImage: string;
  proxyInitImage: string;
  /** Image variant appended to the tag ("distroless", "debug"); "" for none. */
  variant: string;
  imagePullPolicy: string;
  imagePullSecrets: string[];
  istioNamespace: string;
  caAddress: string;
  pilotCertProvider: string;
  clusterName: string;
  network: string;
  meshID: string;
  trustDomain: string;
  clusterDomain: string;
  logLevel: string;
  componentLogLevel: string;
  agentLogLevel: string;
  logAsJson: boolean;
  includeIPRanges: string;
  excludeIPRanges: string;
  includeInboundPorts: string;
  excludeInboundPorts: string;
  includeOutboundPorts: string;
  excludeOutboundPorts: string;
  statusPort: number;
  readinessInitialDelaySeconds: number;
  readinessPeriodSeconds: number;
  readinessFailureThreshold: number;
  startupProbe: { enabled: boolean; failureThreshold: number };
  privileged: boolean;
  capNetBindService: boolean;
  holdApplicationUntilProxyStarts: boolean;
  resources: ResourceRequirements;
  tokenAudience: string;
  /** sidecarInjectorWebhook.rewriteAppHTTPProbe. */
  rewriteAppHTTPProbe: boolean;
}

/** The Istio release whose proxy image Sluice injects by default. */
export const DEFAULT_PROXY_TAG = "1.28.0";

export const DEFAULT_INJECTION_SETTINGS: Readonly<InjectionSettings> = Object.freeze({
  policy: "enabled",
  neverInjectSelector: [],
  alwaysInjectSelector: [],
  defaultTemplates: ["sidecar"],
  injectedAnnotations: {},
  revision: "",
  nativeSidecars: false,
  hub: "docker.io/istio",
  tag: DEFAULT_PROXY_TAG,
  proxyImage: "proxyv2",
  proxyInitImage: "proxyv2",
  variant: "",
  imagePullPolicy: "",
  imagePullSecrets: [],
  istioNamespace: "istio-system",
  caAddress: "",
  pilotCertProvider: "istiod",
  clusterName: "",
  network: "",
  meshID: "",
  trustDomain: "",
  clusterDomain: "cluster.local",
  logLevel: "warning",
  componentLogLevel: "misc:error",
  agentLogLevel: "default:info",
  logAsJson: false,
  includeIPRanges: "*",
  excludeIPRanges: "",
  includeInboundPorts: "*",
  excludeInboundPorts: "",
  includeOutboundPorts: "",
  excludeOutboundPorts: "",
  statusPort: 15020,
  readinessInitialDelaySeconds: 0,
  readinessPeriodSeconds: 15,
  readinessFailureThreshold: 4,
  startupProbe: { enabled: true, failureThreshold: 600 },
  privileged: false,
  capNetBindService: false,
  holdApplicationUntilProxyStarts: false,
  // Istio's values say 2000m and 1024Mi; the API server stores them in this canonical form.
  resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "2", memory: "1Gi" } },
  tokenAudience: "istio-ca",
  rewriteAppHTTPProbe: true,
});

/** ENABLE_NATIVE_SIDECARS as Istio reads it: "true" forces native sidecars on; anything else off. */
export function nativeSidecarsFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.ENABLE_NATIVE_SIDECARS === "true";
}
