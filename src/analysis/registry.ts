// Every analyzer, in Istio's registration order (analyzers.All()), and the ones outside the default set.
import type { Analyzer } from "./analyzer.ts";
import { alphaAnnotationsAnalyzer, k8sAnnotationsAnalyzer } from "./analyzers/annotations.ts";
import { appUidAnalyzer } from "./analyzers/app-uid.ts";
import { authorizationPoliciesAnalyzer } from "./analyzers/authorization-policies.ts";
import { blockedCidrsAnalyzer } from "./analyzers/blocked-cidrs.ts";
import { caCertificateAnalyzer } from "./analyzers/ca-certificate.ts";
import { conditionAnalyzer } from "./analyzers/conditions.ts";
import { conflictingGatewayAnalyzer } from "./analyzers/conflicting-gateway.ts";
import { conflictingMeshGatewayHostsAnalyzer } from "./analyzers/conflicting-mesh-gateway-hosts.ts";
import { conflictingServiceEntryProtocolAnalyzer } from "./analyzers/conflicting-service-entry-protocol.ts";
import { deprecationAnalyzer } from "./analyzers/deprecation.ts";
import { destinationHostAnalyzer } from "./analyzers/destination-host.ts";
import { envoyPatchAnalyzer } from "./analyzers/envoy-patch.ts";
import { externalControlPlaneAnalyzer } from "./analyzers/external-control-plane.ts";
import { gatewayCertificateAnalyzer } from "./analyzers/gateway-certificate.ts";
import { gatewaySecretAnalyzer } from "./analyzers/gateway-secret.ts";
import { imageAutoAnalyzer } from "./analyzers/image-auto.ts";
import { ingressGatewayPortAnalyzer } from "./analyzers/ingress-gateway-port.ts";
import { injectionAnalyzer } from "./analyzers/injection.ts";
import { injectionImageAnalyzer } from "./analyzers/injection-image.ts";
import { jwtClaimRouteAnalyzer } from "./analyzers/jwt-claim-route.ts";
import { crdVersionAnalyzer, k8sGatewaySelectorAnalyzer } from "./analyzers/k8s-gateway.ts";
import { meshNetworksAnalyzer } from "./analyzers/mesh-networks.ts";
import { multiServiceAnalyzer } from "./analyzers/multi-service.ts";
import { multiClusterServiceAnalyzer } from "./analyzers/multicluster-service.ts";
import { portNameAnalyzer } from "./analyzers/port-name.ts";
import { schemaValidationAnalyzers } from "./analyzers/schema-validation.ts";
import { serviceEntryAddressesAnalyzer } from "./analyzers/service-entry-addresses.ts";
import { sidecarSelectorAnalyzer } from "./analyzers/sidecar-selector.ts";
import { subsetSelectPodAnalyzer } from "./analyzers/subset-select-pod.ts";
import { telemetryProviderAnalyzer } from "./analyzers/telemetry-provider.ts";
import {
  telemetryDefaultSelectorAnalyzer,
  telemetryLightstepAnalyzer,
  telemetrySelectorAnalyzer,
} from "./analyzers/telemetry-selectors.ts";
import { vsDestinationRuleAnalyzer } from "./analyzers/vs-destination-rule.ts";
import { vsGatewayAnalyzer } from "./analyzers/vs-gateway.ts";
import { webhookAnalyzer } from "./analyzers/webhook.ts";

/** The default set: what `sluice analyze` runs. */
export const ALL_ANALYZERS: readonly Analyzer[] = [
  k8sAnnotationsAnalyzer,
  blockedCidrsAnalyzer,
  authorizationPoliciesAnalyzer,
  conditionAnalyzer,
  multiServiceAnalyzer,
  appUidAnalyzer,
  caCertificateAnalyzer,
  subsetSelectPodAnalyzer,
  deprecationAnalyzer,
  envoyPatchAnalyzer,
  externalControlPlaneAnalyzer,
  ingressGatewayPortAnalyzer,
  gatewayCertificateAnalyzer,
  gatewaySecretAnalyzer,
  conflictingGatewayAnalyzer,
  injectionAnalyzer,
  injectionImageAnalyzer,
  imageAutoAnalyzer,
  k8sGatewaySelectorAnalyzer,
  crdVersionAnalyzer,
  meshNetworksAnalyzer,
  multiClusterServiceAnalyzer,
  portNameAnalyzer,
  sidecarSelectorAnalyzer,
  conflictingMeshGatewayHostsAnalyzer,
  destinationHostAnalyzer,
  vsDestinationRuleAnalyzer,
  vsGatewayAnalyzer,
  jwtClaimRouteAnalyzer,
  serviceEntryAddressesAnalyzer,
  conflictingServiceEntryProtocolAnalyzer,
  webhookAnalyzer,
  telemetryProviderAnalyzer,
  telemetrySelectorAnalyzer,
  telemetryDefaultSelectorAnalyzer,
  telemetryLightstepAnalyzer,
  ...schemaValidationAnalyzers,
];

/** Analyzers that exist but are not run by default (annotations.AlphaAnalyzer). */
export const OPTIONAL_ANALYZERS: readonly Analyzer[] = [alphaAnnotationsAnalyzer];

export function findAnalyzer(name: string): Analyzer | undefined {
  return [...ALL_ANALYZERS, ...OPTIONAL_ANALYZERS].find((a) => a.name === name);
}

/** Istio's NamedCombined: the default analyzers with these names, or all of them when none matches. */
export function selectAnalyzers(names: readonly string[]): readonly Analyzer[] {
  const selected = ALL_ANALYZERS.filter((a) => names.includes(a.name));
  return selected.length > 0 ? selected : ALL_ANALYZERS;
}
