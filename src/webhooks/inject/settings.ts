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
  /** A name that stands for several templates (`sidecar: [proxy, init]`), expanded once, not recursively. */
  aliases: Record<string, string[]>;
  /**
   * Templates the injector config defines that Sluice has no built-in template for: their Go
   * template text is not run, so a pod asking for one is refused.
   */
  customTemplates: string[];
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
  /** global.proxy_init.forceApplyIptables: istio-init applies its rules even if some exist. */
  forceApplyIptables: boolean;
  /** global.nativeNftables: nftables instead of iptables. */
  nativeNftables: boolean;
  /** pilot.cni: the Istio CNI plugin sets up the redirect; the pod only validates it (istio-validation). */
  cni: { enabled: boolean; provider: string };
  /** sidecarInjectorWebhook.rewriteAppHTTPProbe. */
  rewriteAppHTTPProbe: boolean;
  /** global.proxy.lifecycle: the gateway proxy container's lifecycle hooks; empty for none. */
  proxyLifecycle: Record<string, unknown>;
  /** global.sts.servicePort: the agent's STS port for gateways; 0 for none. */
  stsPort: number;
  /** gateways.securityContext: a managed gateway's pod security context; empty for Istio's default. */
  gatewaySecurityContext: Record<string, unknown>;
  /** gateways.seccompProfile: added to the default gateway pod security context; empty for none. */
  gatewaySeccompProfile: Record<string, unknown>;
  /** global.platform: on "openshift" a waypoint's proxy takes the user and group OpenShift assigns. */
  platform: string;
  /** global.proxy.outlierLogPath: a waypoint proxy's outlier detection log; "" for none. */
  outlierLogPath: string;
  /** global.waypoint: a waypoint's proxy resources and pod scheduling. */
  waypoint: WaypointSettings;
}

export interface WaypointSettings {
  resources: ResourceRequirements;
  /** Each left out of the pod when empty. */
  affinity: Record<string, unknown>;
  topologySpreadConstraints: unknown[];
  nodeSelector: Record<string, unknown>;
  tolerations: unknown[];
}

/** The Istio release whose proxy image Sluice injects by default. */
export const DEFAULT_PROXY_TAG = "1.28.0";

export const DEFAULT_INJECTION_SETTINGS: Readonly<InjectionSettings> = Object.freeze({
  policy: "enabled",
  neverInjectSelector: [],
  alwaysInjectSelector: [],
  defaultTemplates: ["sidecar"],
  aliases: {},
  customTemplates: [],
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
  forceApplyIptables: false,
  nativeNftables: false,
  cni: { enabled: false, provider: "default" },
  rewriteAppHTTPProbe: true,
  proxyLifecycle: {},
  stsPort: 0,
  gatewaySecurityContext: {},
  gatewaySeccompProfile: {},
  platform: "",
  outlierLogPath: "",
  waypoint: {
    resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "2", memory: "1Gi" } },
    affinity: {},
    topologySpreadConstraints: [],
    nodeSelector: {},
    tolerations: [],
  },
});

/** ENABLE_NATIVE_SIDECARS: always, never, or when every node's kubelet supports them (1.33 and later). */
export type NativeSidecarMode = "enabled" | "disabled" | "auto";

/** ENABLE_NATIVE_SIDECARS as Istio reads it: unset is "auto"; an unknown value is "disabled". */
export function nativeSidecarModeFromEnv(env: NodeJS.ProcessEnv = process.env): NativeSidecarMode {
  const value = env.ENABLE_NATIVE_SIDECARS ?? "auto";
  if (value === "true") return "enabled";
  if (value === "auto") return "auto";
  return "disabled";
}

interface NodeLike {
  metadata: { name?: string };
  status?: unknown;
}

/**
 * Istio's DetectNativeSidecar: in "auto" mode, native sidecars when the pod's node (or, before the pod
 * is scheduled, every node) runs kubelet 1.33 or later. Without a node lister, "auto" means no.
 */
export function detectNativeSidecar(
  mode: NativeSidecarMode,
  nodes: readonly NodeLike[] | undefined,
  nodeName: string | undefined,
): boolean {
  if (mode !== "auto") return mode === "enabled";
  if (!nodes) return false;
  const supported = (node: NodeLike) => {
    const version = (node.status as { nodeInfo?: { kubeletVersion?: string } } | undefined)?.nodeInfo?.kubeletVersion;
    const match = /^v?(\d+)\.(\d+)/.exec(version ?? "");
    return match !== null && Number(match[2]) >= 33;
  };
  const node = nodeName ? nodes.find((n) => n.metadata.name === nodeName) : undefined;
  if (node) return supported(node);
  return nodes.every(supported);
}

// ---- Istio's Helm values (the injector ConfigMap's `values`, istioctl's --valuesFile).

type Values = Record<string, unknown>;

function child(values: Values | undefined, key: string): Values | undefined {
  const value = values?.[key];
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Values) : undefined;
}

/** The settings `values` (parsed YAML or JSON) describe, over `base` for what they leave out. */
export function injectionSettingsFromValues(
  values: unknown,
  base: Readonly<InjectionSettings> = DEFAULT_INJECTION_SETTINGS,
): InjectionSettings {
  const root = typeof values === "object" && values !== null ? (values as Values) : {};
  const global = child(root, "global");
  const proxy = child(global, "proxy");
  const injector = child(root, "sidecarInjectorWebhook");
  const out: InjectionSettings = structuredClone({ ...base });
  const str = (from: Values | undefined, key: string, apply: (v: string) => void) => {
    const v = from?.[key];
    if (typeof v === "string" || typeof v === "number") apply(String(v));
  };
  const num = (from: Values | undefined, key: string, apply: (v: number) => void) => {
    const v = from?.[key];
    if (typeof v === "number") apply(v);
    else if (typeof v === "string" && /^[0-9]+$/.test(v)) apply(Number(v));
  };
  const bool = (from: Values | undefined, key: string, apply: (v: boolean) => void) => {
    const v = from?.[key];
    if (typeof v === "boolean") apply(v);
  };
  const list = <T>(from: Values | undefined, key: string, apply: (v: T[]) => void) => {
    const v = from?.[key];
    if (Array.isArray(v)) apply(structuredClone(v) as T[]);
  };

  str(root, "revision", (v) => (out.revision = v));
  str(global, "hub", (v) => (out.hub = v));
  str(global, "tag", (v) => (out.tag = v));
  str(global, "variant", (v) => (out.variant = v));
  str(global, "imagePullPolicy", (v) => (out.imagePullPolicy = v));
  list<string>(global, "imagePullSecrets", (v) => (out.imagePullSecrets = v));
  str(global, "istioNamespace", (v) => (out.istioNamespace = v));
  str(global, "caAddress", (v) => (out.caAddress = v));
  str(global, "pilotCertProvider", (v) => (out.pilotCertProvider = v));
  str(child(global, "multiCluster"), "clusterName", (v) => (out.clusterName = v));
  str(global, "network", (v) => (out.network = v));
  str(global, "meshID", (v) => (out.meshID = v));
  str(global, "trustDomain", (v) => (out.trustDomain = v));
  str(child(global, "logging"), "level", (v) => (out.agentLogLevel = v));
  bool(global, "logAsJson", (v) => (out.logAsJson = v));
  str(child(child(global, "sds"), "token"), "aud", (v) => (out.tokenAudience = v));
  str(child(global, "proxy_init"), "image", (v) => (out.proxyInitImage = v));
  bool(child(global, "proxy_init"), "forceApplyIptables", (v) => (out.forceApplyIptables = v));
  bool(global, "nativeNftables", (v) => (out.nativeNftables = v));

  str(proxy, "image", (v) => (out.proxyImage = v));
  str(proxy, "autoInject", (v) => (out.policy = v === "disabled" ? "disabled" : "enabled"));
  str(proxy, "clusterDomain", (v) => (out.clusterDomain = v));
  str(proxy, "logLevel", (v) => (out.logLevel = v));
  str(proxy, "componentLogLevel", (v) => (out.componentLogLevel = v));
  str(proxy, "includeIPRanges", (v) => (out.includeIPRanges = v));
  str(proxy, "excludeIPRanges", (v) => (out.excludeIPRanges = v));
  str(proxy, "includeInboundPorts", (v) => (out.includeInboundPorts = v));
  str(proxy, "excludeInboundPorts", (v) => (out.excludeInboundPorts = v));
  str(proxy, "includeOutboundPorts", (v) => (out.includeOutboundPorts = v));
  str(proxy, "excludeOutboundPorts", (v) => (out.excludeOutboundPorts = v));
  num(proxy, "statusPort", (v) => (out.statusPort = v));
  num(proxy, "readinessInitialDelaySeconds", (v) => (out.readinessInitialDelaySeconds = v));
  num(proxy, "readinessPeriodSeconds", (v) => (out.readinessPeriodSeconds = v));
  num(proxy, "readinessFailureThreshold", (v) => (out.readinessFailureThreshold = v));
  bool(child(proxy, "startupProbe"), "enabled", (v) => (out.startupProbe.enabled = v));
  num(child(proxy, "startupProbe"), "failureThreshold", (v) => (out.startupProbe.failureThreshold = v));
  bool(proxy, "privileged", (v) => (out.privileged = v));
  bool(proxy, "capNetBindService", (v) => (out.capNetBindService = v));
  bool(proxy, "holdApplicationUntilProxyStarts", (v) => (out.holdApplicationUntilProxyStarts = v));
  const map = (from: Values | undefined, key: string, apply: (v: Values) => void) => {
    const v = child(from, key);
    if (v) apply(structuredClone(v));
  };
  map(proxy, "lifecycle", (v) => (out.proxyLifecycle = v));
  num(child(global, "sts"), "servicePort", (v) => (out.stsPort = v));
  map(child(root, "gateways"), "securityContext", (v) => (out.gatewaySecurityContext = v));
  map(child(root, "gateways"), "seccompProfile", (v) => (out.gatewaySeccompProfile = v));
  const resources = child(proxy, "resources");
  if (resources) out.resources = resourceRequirements(resources);
  str(global, "platform", (v) => (out.platform = v));
  str(proxy, "outlierLogPath", (v) => (out.outlierLogPath = v));
  const waypoint = child(global, "waypoint");
  const waypointResources = child(waypoint, "resources");
  if (waypointResources) out.waypoint.resources = resourceRequirements(waypointResources);
  map(waypoint, "affinity", (v) => (out.waypoint.affinity = v));
  map(waypoint, "nodeSelector", (v) => (out.waypoint.nodeSelector = v));
  list<unknown>(waypoint, "topologySpreadConstraints", (v) => (out.waypoint.topologySpreadConstraints = v));
  list<unknown>(waypoint, "tolerations", (v) => (out.waypoint.tolerations = v));

  const cni = child(child(root, "pilot"), "cni");
  bool(cni, "enabled", (v) => (out.cni.enabled = v));
  str(cni, "provider", (v) => (out.cni.provider = v));
  bool(injector, "rewriteAppHTTPProbe", (v) => (out.rewriteAppHTTPProbe = v));
  list<string>(injector, "defaultTemplates", (v) => {
    if (v.length > 0) out.defaultTemplates = v;
  });
  list<LabelSelector>(injector, "neverInjectSelector", (v) => (out.neverInjectSelector = v));
  list<LabelSelector>(injector, "alwaysInjectSelector", (v) => (out.alwaysInjectSelector = v));
  const injected = child(injector, "injectedAnnotations");
  if (injected) out.injectedAnnotations = Object.fromEntries(Object.entries(injected).map(([k, v]) => [k, String(v)]));
  return out;
}

/** `requests`/`limits` maps; the template's omitNil drops null entries. */
function resourceRequirements(values: Values): ResourceRequirements {
  const out: ResourceRequirements = {};
  for (const key of ["requests", "limits"] as const) {
    const entries = Object.entries(child(values, key) ?? {}).filter(([, v]) => v !== null && v !== undefined);
    if (entries.length > 0) out[key] = Object.fromEntries(entries.map(([k, v]) => [k, String(v)]));
  }
  return out;
}
