// Istio's analysis message types (pkg/config/analysis/msg/messages.yaml): code, level and the exact
// Go format template. Written from that file once; keep in step with it.
import type { MessageType } from "./message.ts";

export const MESSAGES = {
  InternalError: { name: "InternalError", code: "IST0001", level: "Error", template: "Internal error: %v" },
  Deprecated: { name: "Deprecated", code: "IST0002", level: "Warning", template: "Deprecated: %s" },
  ReferencedResourceNotFound: {
    name: "ReferencedResourceNotFound",
    code: "IST0101",
    level: "Error",
    template: "Referenced %s not found: %q",
  },
  NamespaceNotInjected: {
    name: "NamespaceNotInjected",
    code: "IST0102",
    level: "Info",
    template:
      "The namespace is not enabled for Istio injection. Run 'kubectl label namespace %s istio-injection=enabled' to enable it, or 'kubectl label namespace %s istio-injection=disabled' to explicitly mark it as not needing injection.",
  },
  PodMissingProxy: {
    name: "PodMissingProxy",
    code: "IST0103",
    level: "Warning",
    template:
      "The pod %s is missing the Istio proxy. This can often be resolved by restarting or redeploying the workload.",
  },
  SchemaValidationError: {
    name: "SchemaValidationError",
    code: "IST0106",
    level: "Error",
    template: "Schema validation error: %v",
  },
  MisplacedAnnotation: {
    name: "MisplacedAnnotation",
    code: "IST0107",
    level: "Warning",
    template: "Misplaced annotation: %s can only be applied to %s",
  },
  UnknownAnnotation: {
    name: "UnknownAnnotation",
    code: "IST0108",
    level: "Warning",
    template: "Unknown annotation: %s",
  },
  ConflictingMeshGatewayVirtualServiceHosts: {
    name: "ConflictingMeshGatewayVirtualServiceHosts",
    code: "IST0109",
    level: "Error",
    template:
      "The VirtualServices %s associated with mesh gateway define the same host %s which can lead to undefined behavior. This can be fixed by merging the conflicting VirtualServices into a single resource.",
  },
  ConflictingSidecarWorkloadSelectors: {
    name: "ConflictingSidecarWorkloadSelectors",
    code: "IST0110",
    level: "Error",
    template: "The Sidecars %v in namespace %q select the same workload pod %q, which can lead to undefined behavior.",
  },
  MultipleSidecarsWithoutWorkloadSelectors: {
    name: "MultipleSidecarsWithoutWorkloadSelectors",
    code: "IST0111",
    level: "Error",
    template: "The Sidecars %v in namespace %q have no workload selector, which can lead to undefined behavior.",
  },
  VirtualServiceDestinationPortSelectorRequired: {
    name: "VirtualServiceDestinationPortSelectorRequired",
    code: "IST0112",
    level: "Error",
    template:
      "This VirtualService routes to a service %q that exposes multiple ports %v. Specifying a port in the destination is required to disambiguate.",
  },
  DeploymentAssociatedToMultipleServices: {
    name: "DeploymentAssociatedToMultipleServices",
    code: "IST0116",
    level: "Warning",
    template: "This deployment %s is associated with multiple services using port %d but different protocols: %v",
  },
  PortNameIsNotUnderNamingConvention: {
    name: "PortNameIsNotUnderNamingConvention",
    code: "IST0118",
    level: "Info",
    template: "Port name %s (port: %d, targetPort: %s) doesn't follow the naming convention of Istio port.",
  },
  NamespaceMultipleInjectionLabels: {
    name: "NamespaceMultipleInjectionLabels",
    code: "IST0123",
    level: "Warning",
    template:
      "The namespace has more than one type of injection labels %v, which may lead to undefined behavior. Make sure only one injection label exists.",
  },
  InvalidAnnotation: {
    name: "InvalidAnnotation",
    code: "IST0125",
    level: "Warning",
    template: "Invalid annotation %s: %s",
  },
  UnknownMeshNetworksServiceRegistry: {
    name: "UnknownMeshNetworksServiceRegistry",
    code: "IST0126",
    level: "Error",
    template: "Unknown service registry %s in network %s",
  },
  NoMatchingWorkloadsFound: {
    name: "NoMatchingWorkloadsFound",
    code: "IST0127",
    level: "Warning",
    template: "No matching workloads for this resource with the following labels: %s",
  },
  NoServerCertificateVerificationDestinationLevel: {
    name: "NoServerCertificateVerificationDestinationLevel",
    code: "IST0128",
    level: "Warning",
    template:
      "DestinationRule %s in namespace %s has TLS mode set to %s but no caCertificates are set to validate server identity for host: %s",
  },
  NoServerCertificateVerificationPortLevel: {
    name: "NoServerCertificateVerificationPortLevel",
    code: "IST0129",
    level: "Warning",
    template:
      "DestinationRule %s in namespace %s has TLS mode set to %s but no caCertificates are set to validate server identity for host: %s at port %s",
  },
  VirtualServiceUnreachableRule: {
    name: "VirtualServiceUnreachableRule",
    code: "IST0130",
    level: "Warning",
    template: "VirtualService rule %v not used (%s).",
  },
  VirtualServiceIneffectiveMatch: {
    name: "VirtualServiceIneffectiveMatch",
    code: "IST0131",
    level: "Info",
    template: "VirtualService rule %v match %v is not used (duplicate/overlapping match in rule %v).",
  },
  VirtualServiceHostNotFoundInGateway: {
    name: "VirtualServiceHostNotFoundInGateway",
    code: "IST0132",
    level: "Warning",
    template: "one or more host %v defined in VirtualService %s not found in Gateway %s.",
  },
  SchemaWarning: {
    name: "SchemaWarning",
    code: "IST0133",
    level: "Warning",
    template: "Schema validation warning: %v",
  },
  ServiceEntryAddressesRequired: {
    name: "ServiceEntryAddressesRequired",
    code: "IST0134",
    level: "Warning",
    template: "ServiceEntry addresses are required for this protocol.",
  },
  DeprecatedAnnotation: {
    name: "DeprecatedAnnotation",
    code: "IST0135",
    level: "Info",
    template: "Annotation %q has been deprecated%s and may not work in future Istio versions.",
  },
  AlphaAnnotation: {
    name: "AlphaAnnotation",
    code: "IST0136",
    level: "Info",
    template: "Annotation %q is part of an alpha-phase feature and may be incompletely supported.",
  },
  DeploymentConflictingPorts: {
    name: "DeploymentConflictingPorts",
    code: "IST0137",
    level: "Warning",
    template: "This deployment %s is associated with multiple services %v using targetPort %q but different ports: %v.",
  },
  GatewayDuplicateCertificate: {
    name: "GatewayDuplicateCertificate",
    code: "IST0138",
    level: "Warning",
    template: "Duplicate certificate in multiple gateways %v may cause 404s if clients re-use HTTP2 connections.",
  },
  InvalidWebhook: { name: "InvalidWebhook", code: "IST0139", level: "Error", template: "%v" },
  IngressRouteRulesNotAffected: {
    name: "IngressRouteRulesNotAffected",
    code: "IST0140",
    level: "Warning",
    template: "Subset in virtual service %s has no effect on ingress gateway %s requests",
  },
  InsufficientPermissions: {
    name: "InsufficientPermissions",
    code: "IST0141",
    level: "Error",
    template: "Missing required permission to create resource %v (%v)",
  },
  UnsupportedKubernetesVersion: {
    name: "UnsupportedKubernetesVersion",
    code: "IST0142",
    level: "Error",
    template: "The Kubernetes Version %q is lower than the minimum version: %v",
  },
  LocalhostListener: {
    name: "LocalhostListener",
    code: "IST0143",
    level: "Error",
    template: "Port %v is exposed in a Service but listens on localhost. It will not be exposed to other pods.",
  },
  InvalidApplicationUID: {
    name: "InvalidApplicationUID",
    code: "IST0144",
    level: "Warning",
    template: "User ID (UID) 1337 is reserved for the sidecar proxy.",
  },
  ConflictingGateways: {
    name: "ConflictingGateways",
    code: "IST0145",
    level: "Error",
    template: "Conflict with gateways %s (workload selector %s, port %s, hosts %v).",
  },
  ImageAutoWithoutInjectionWarning: {
    name: "ImageAutoWithoutInjectionWarning",
    code: "IST0146",
    level: "Warning",
    template: "%s %s contains `image: auto` but does not match any Istio injection webhook selectors.",
  },
  ImageAutoWithoutInjectionError: {
    name: "ImageAutoWithoutInjectionError",
    code: "IST0147",
    level: "Error",
    template: "%s %s contains `image: auto` but does not match any Istio injection webhook selectors.",
  },
  NamespaceInjectionEnabledByDefault: {
    name: "NamespaceInjectionEnabledByDefault",
    code: "IST0148",
    level: "Info",
    template: "is enabled for Istio injection, as Istio is installed with enableNamespacesByDefault as true.",
  },
  JwtClaimBasedRoutingWithoutRequestAuthN: {
    name: "JwtClaimBasedRoutingWithoutRequestAuthN",
    code: "IST0149",
    level: "Error",
    template:
      "The virtual service uses the JWT claim based routing (key: %s) but found no request authentication for the gateway (%s) pod (%s). The request authentication must first be applied for the gateway pods to validate the JWT token and make the claims available for routing.",
  },
  ExternalNameServiceTypeInvalidPortName: {
    name: "ExternalNameServiceTypeInvalidPortName",
    code: "IST0150",
    level: "Warning",
    template:
      "Port name for ExternalName service is invalid. Proxy may prevent tcp named ports and unmatched traffic for ports serving TCP protocol from being forwarded correctly",
  },
  EnvoyFilterUsesRelativeOperation: {
    name: "EnvoyFilterUsesRelativeOperation",
    code: "IST0151",
    level: "Warning",
    template:
      "This EnvoyFilter does not have a priority and has a relative patch operation set which can cause the EnvoyFilter not to be applied. Using the INSERT_FIRST of ADD option or setting the priority may help in ensuring the EnvoyFilter is applied correctly.",
  },
  EnvoyFilterUsesReplaceOperationIncorrectly: {
    name: "EnvoyFilterUsesReplaceOperationIncorrectly",
    code: "IST0152",
    level: "Error",
    template: "The REPLACE operation is only valid for HTTP_FILTER and NETWORK_FILTER.",
  },
  EnvoyFilterUsesAddOperationIncorrectly: {
    name: "EnvoyFilterUsesAddOperationIncorrectly",
    code: "IST0153",
    level: "Error",
    template: "The ADD operation will be ignored when applyTo is set to ROUTE_CONFIGURATION, or HTTP_ROUTE.",
  },
  EnvoyFilterUsesRemoveOperationIncorrectly: {
    name: "EnvoyFilterUsesRemoveOperationIncorrectly",
    code: "IST0154",
    level: "Error",
    template: "The REMOVE operation will be ignored when applyTo is set to ROUTE_CONFIGURATION, or HTTP_ROUTE.",
  },
  EnvoyFilterUsesRelativeOperationWithProxyVersion: {
    name: "EnvoyFilterUsesRelativeOperationWithProxyVersion",
    code: "IST0155",
    level: "Warning",
    template:
      "This EnvoyFilter does not have a priority and has a relative patch operation (NSTERT_BEFORE/AFTER, REPLACE, MERGE, DELETE) and proxyVersion set which can cause the EnvoyFilter not to be applied during an upgrade. Using the INSERT_FIRST or ADD option or setting the priority may help in ensuring the EnvoyFilter is applied correctly.",
  },
  UnsupportedGatewayAPIVersion: {
    name: "UnsupportedGatewayAPIVersion",
    code: "IST0156",
    level: "Error",
    template: "The Gateway API CRD version %v is lower than the minimum version: %v",
  },
  FutureUnsupportedGatewayAPIVersion: {
    name: "FutureUnsupportedGatewayAPIVersion",
    code: "IST0172",
    level: "Warning",
    template: "The Gateway API CRD version %v is lower than the minimum version: %v",
  },
  InvalidTelemetryProvider: {
    name: "InvalidTelemetryProvider",
    code: "IST0157",
    level: "Warning",
    template: "The Telemetry %v in namespace %q with empty providers will be ignored.",
  },
  PodsIstioProxyImageMismatchInNamespace: {
    name: "PodsIstioProxyImageMismatchInNamespace",
    code: "IST0158",
    level: "Warning",
    template:
      "The Istio proxy images of the pods running in the namespace do not match the image defined in the injection configuration (pod names: %v). This often happens after upgrading the Istio control-plane and can be fixed by redeploying the pods.",
  },
  ConflictingTelemetryWorkloadSelectors: {
    name: "ConflictingTelemetryWorkloadSelectors",
    code: "IST0159",
    level: "Error",
    template:
      "The Telemetries %v in namespace %q select the same workload pod %q, which can lead to undefined behavior.",
  },
  MultipleTelemetriesWithoutWorkloadSelectors: {
    name: "MultipleTelemetriesWithoutWorkloadSelectors",
    code: "IST0160",
    level: "Error",
    template: "The Telemetries %v in namespace %q have no workload selector, which can lead to undefined behavior.",
  },
  InvalidGatewayCredential: {
    name: "InvalidGatewayCredential",
    code: "IST0161",
    level: "Error",
    template:
      "The credential referenced by the Gateway %s in namespace %s is invalid, which can cause the traffic not to work as expected.",
  },
  GatewayPortNotDefinedOnService: {
    name: "GatewayPortNotDefinedOnService",
    code: "IST0162",
    level: "Warning",
    template:
      "The gateway is listening on a target port (port %d) that is not defined in the Service associated with its workload instances (Pod selector %s). If you need to access the gateway port through the gateway Service, it will not be available.",
  },
  InvalidExternalControlPlaneConfig: {
    name: "InvalidExternalControlPlaneConfig",
    code: "IST0163",
    level: "Warning",
    template:
      "The hostname (%s) that was provided for the webhook (%s) to reach the ingress gateway on the external control plane cluster %s. Traffic may not flow properly.",
  },
  ExternalControlPlaneAddressIsNotAHostname: {
    name: "ExternalControlPlaneAddressIsNotAHostname",
    code: "IST0164",
    level: "Info",
    template:
      "The address (%s) that was provided for the webhook (%s) to reach the ingress gateway on the external control plane cluster is an IP address. This is not recommended for a production environment.",
  },
  ReferencedInternalGateway: {
    name: "ReferencedInternalGateway",
    code: "IST0165",
    level: "Warning",
    template: "Gateway reference in VirtualService %s is to an implementation-generated internal Gateway: %s.",
  },
  IneffectiveSelector: {
    name: "IneffectiveSelector",
    code: "IST0166",
    level: "Warning",
    template: "Ineffective selector on Kubernetes Gateway %s. Use the TargetRef field instead.",
  },
  IneffectivePolicy: {
    name: "IneffectivePolicy",
    code: "IST0167",
    level: "Warning",
    template: "The policy has no impact: %s.",
  },
  UnknownUpgradeCompatibility: {
    name: "UnknownUpgradeCompatibility",
    code: "IST0168",
    level: "Warning",
    template:
      "The configuration %q changed in release %s, but compatibility cannot be automatically detected: %s. Or, install with `--set compatibilityVersion=%s` to retain the old default.",
  },
  UpdateIncompatibility: {
    name: "UpdateIncompatibility",
    code: "IST0169",
    level: "Warning",
    template:
      "The configuration %q changed in release %s: %s. Or, install with `--set compatibilityVersion=%s` to retain the old default.",
  },
  MultiClusterInconsistentService: {
    name: "MultiClusterInconsistentService",
    code: "IST0170",
    level: "Warning",
    template:
      "The service %v in namespace %q is inconsistent across clusters %q, which can lead to undefined behaviors. The inconsistent behaviors are: %v.",
  },
  NegativeConditionStatus: {
    name: "NegativeConditionStatus",
    code: "IST0171",
    level: "Warning",
    template: "A condition with a negative status is present: type=%s, reason=%s, message=%s.",
  },
  DestinationRuleSubsetNotSelectPods: {
    name: "DestinationRuleSubsetNotSelectPods",
    code: "IST0173",
    level: "Error",
    template:
      "The Subset %s defined in the DestinationRule does not select any pods. Which may lead to 503 UH (NoHealthyUpstream).",
  },
  UnknownDestinationRuleHost: {
    name: "UnknownDestinationRuleHost",
    code: "IST0174",
    level: "Warning",
    template: "The host %s defined in the DestinationRule does not match any services in the mesh.",
  },
  JwksUriFetchUnrestricted: {
    name: "JwksUriFetchUnrestricted",
    code: "IST0175",
    level: "Warning",
    template:
      "BLOCKED_CIDRS_IN_JWKS_URIS is not configured but %d RequestAuthentication resource(s) exist (%s). Consider configuring it to restrict JWKS URI fetches to trusted networks.",
  },
  GatewayAPICRDVersionBelowMinimum: {
    name: "GatewayAPICRDVersionBelowMinimum",
    code: "IST0176",
    level: "Warning",
    template:
      "Gateway API CRD %q is at version %q but Istio requires at least %q; resources of this kind will not be processed. Upgrade the Gateway API CRDs to satisfy the minimum version.",
  },
  ConflictingServiceEntryProtocol: {
    name: "ConflictingServiceEntryProtocol",
    code: "IST0177",
    level: "Warning",
    template: "Multiple ServiceEntries (%s) define the same host %q and port %d with conflicting protocols (%s).",
  },
} as const satisfies Record<string, MessageType>;
