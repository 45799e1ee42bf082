// Istio's resource annotations (istio.io/api annotation.AllResourceAnnotations): name, feature status,
// whether deprecated (an annotation without a declared status is Alpha, as Istio generates it), and the
// resource types they attach to. The analyzers check annotations with it.

export type FeatureStatus = "Alpha" | "Beta" | "Stable";

export interface AnnotationInfo {
  name: string;
  featureStatus: FeatureStatus;
  deprecated: boolean;
  /** Resource type names; "Any" attaches anywhere. */
  resources: readonly string[];
}

const ROWS: readonly [string, FeatureStatus, boolean, readonly string[]][] = [
  ["prometheus.istio.io/merge-metrics", "Alpha", false, ["Pod"]],
  ["alpha.istio.io/kubernetes-serviceaccounts", "Alpha", true, ["Service"]],
  ["alpha.istio.io/canonical-serviceaccounts", "Alpha", true, ["Service"]],
  ["networking.istio.io/exportTo", "Alpha", false, ["Service"]],
  ["sidecar.istio.io/inject", "Beta", true, ["Pod"]],
  ["sidecar.istio.io/status", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/rewriteAppHTTPProbers", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/discoveryAddress", "Alpha", true, ["Pod"]],
  ["sidecar.istio.io/proxyImage", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/proxyImageType", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/proxyCPU", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/proxyCPULimit", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/proxyMemory", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/proxyMemoryLimit", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/interceptionMode", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/bootstrapOverride", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/statsInclusionPrefixes", "Alpha", true, ["Pod"]],
  ["sidecar.istio.io/statsInclusionSuffixes", "Alpha", true, ["Pod"]],
  ["sidecar.istio.io/statsInclusionRegexps", "Alpha", true, ["Pod"]],
  ["sidecar.istio.io/statsHistogramBuckets", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/statsFlushInterval", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/statsEvictionInterval", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/statsHistogramBins", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/userVolume", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/userVolumeMount", "Alpha", false, ["Pod"]],
  ["status.sidecar.istio.io/port", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/logLevel", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/componentLogLevel", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/agentLogLevel", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/nativeSidecar", "Alpha", false, ["Pod"]],
  ["readiness.status.sidecar.istio.io/initialDelaySeconds", "Alpha", false, ["Pod"]],
  ["readiness.status.sidecar.istio.io/periodSeconds", "Alpha", false, ["Pod"]],
  ["readiness.status.sidecar.istio.io/failureThreshold", "Alpha", false, ["Pod"]],
  ["readiness.status.sidecar.istio.io/applicationPorts", "Alpha", false, ["Pod"]],
  ["traffic.istio.io/nodeSelector", "Stable", false, ["Service"]],
  ["traffic.sidecar.istio.io/includeOutboundIPRanges", "Alpha", false, ["Pod"]],
  ["traffic.sidecar.istio.io/excludeOutboundIPRanges", "Alpha", false, ["Pod"]],
  ["traffic.sidecar.istio.io/includeInboundPorts", "Alpha", false, ["Pod"]],
  ["traffic.sidecar.istio.io/excludeInboundPorts", "Alpha", false, ["Pod"]],
  ["traffic.sidecar.istio.io/excludeInterfaces", "Alpha", false, ["Pod"]],
  ["traffic.sidecar.istio.io/includeOutboundPorts", "Alpha", false, ["Pod"]],
  ["traffic.sidecar.istio.io/excludeOutboundPorts", "Alpha", false, ["Pod"]],
  ["traffic.sidecar.istio.io/kubevirtInterfaces", "Alpha", true, ["Pod"]],
  ["kubernetes.io/ingress.class", "Stable", false, ["Ingress"]],
  ["galley.istio.io/analyze-suppress", "Alpha", false, ["Any"]],
  ["proxy.istio.io/config", "Beta", false, ["Pod"]],
  ["istio.io/dry-run", "Alpha", false, ["AuthorizationPolicy"]],
  ["istio.io/rev", "Alpha", false, ["Pod"]],
  ["proxy.istio.io/overrides", "Alpha", false, ["Pod"]],
  ["inject.istio.io/templates", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/extraStatTags", "Alpha", true, ["Pod"]],
  ["istio.io/autoRegistrationGroup", "Alpha", false, ["WorkloadEntry"]],
  ["istio.io/workloadController", "Alpha", false, ["WorkloadEntry"]],
  ["istio.io/connectedAt", "Alpha", false, ["WorkloadEntry"]],
  ["istio.io/disconnectedAt", "Alpha", false, ["WorkloadEntry"]],
  ["topology.istio.io/controlPlaneClusters", "Alpha", false, ["Namespace"]],
  ["gateway.istio.io/controller-version", "Alpha", false, ["Any"]],
  ["ambient.istio.io/redirection", "Beta", false, ["Pod"]],
  ["ambient.istio.io/waypoint-inbound-binding", "Alpha", false, ["GatewayClass", "Gateway"]],
  ["gateway.istio.io/service-account", "Alpha", false, ["Gateway"]],
  ["gateway.istio.io/name-override", "Alpha", false, ["Gateway"]],
  ["networking.istio.io/service-type", "Alpha", false, ["Gateway"]],
  ["networking.istio.io/traffic-distribution", "Alpha", false, ["Namespace", "Service", "ServiceEntry"]],
  ["istio.io/use-waypoint-canary-weight", "Alpha", false, ["Service", "ServiceEntry", "Namespace"]],
  ["ambient.istio.io/bypass-inbound-capture", "Alpha", false, ["Pod"]],
  ["istio.io/reroute-virtual-interfaces", "Alpha", false, ["Pod"]],
  ["ambient.istio.io/dns-capture", "Alpha", false, ["Pod"]],
  ["sidecar.istio.io/statsCompression", "Alpha", true, ["Pod"]],
];

export const ISTIO_ANNOTATIONS: ReadonlyMap<string, AnnotationInfo> = new Map(
  ROWS.map(([name, featureStatus, deprecated, resources]) => [name, { name, featureStatus, deprecated, resources }]),
);
