// The kinds analyzers read, as `group/Kind` keys. MeshConfig and MeshNetworks are not Kubernetes kinds:
// the analysis presents the effective mesh config and networks as istio-system/meshconfig and /meshnetworks.
import { kindKey } from "../config/index.ts";

const NET = "networking.istio.io";
const SEC = "security.istio.io";

export const K = {
  VirtualService: kindKey(NET, "VirtualService"),
  DestinationRule: kindKey(NET, "DestinationRule"),
  Gateway: kindKey(NET, "Gateway"),
  ServiceEntry: kindKey(NET, "ServiceEntry"),
  Sidecar: kindKey(NET, "Sidecar"),
  WorkloadEntry: kindKey(NET, "WorkloadEntry"),
  WorkloadGroup: kindKey(NET, "WorkloadGroup"),
  EnvoyFilter: kindKey(NET, "EnvoyFilter"),
  ProxyConfig: kindKey(NET, "ProxyConfig"),
  AuthorizationPolicy: kindKey(SEC, "AuthorizationPolicy"),
  PeerAuthentication: kindKey(SEC, "PeerAuthentication"),
  RequestAuthentication: kindKey(SEC, "RequestAuthentication"),
  Telemetry: kindKey("telemetry.istio.io", "Telemetry"),
  WasmPlugin: kindKey("extensions.istio.io", "WasmPlugin"),
  TrafficExtension: kindKey("extensions.istio.io", "TrafficExtension"),
  MeshConfig: kindKey("", "MeshConfig"),
  MeshNetworks: kindKey("", "MeshNetworks"),
  K8sGateway: kindKey("gateway.networking.k8s.io", "Gateway"),
  HTTPRoute: kindKey("gateway.networking.k8s.io", "HTTPRoute"),
  GRPCRoute: kindKey("gateway.networking.k8s.io", "GRPCRoute"),
  Namespace: kindKey("", "Namespace"),
  Service: kindKey("", "Service"),
  Pod: kindKey("", "Pod"),
  Node: kindKey("", "Node"),
  Secret: kindKey("", "Secret"),
  ConfigMap: kindKey("", "ConfigMap"),
  Deployment: kindKey("apps", "Deployment"),
  MutatingWebhookConfiguration: kindKey("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
  ValidatingWebhookConfiguration: kindKey("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
  CustomResourceDefinition: kindKey("apiextensions.k8s.io", "CustomResourceDefinition"),
} as const;

/** Kinds without a namespace: a file object of these kinds never takes the default namespace. */
export const CLUSTER_SCOPED: ReadonlySet<string> = new Set([
  K.Namespace,
  K.Node,
  K.MutatingWebhookConfiguration,
  K.ValidatingWebhookConfiguration,
  K.CustomResourceDefinition,
]);
