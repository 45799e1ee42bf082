// Istio's webhook validation, one file per kind; this map is the dispatch (Istio's collections.gen.go).
// Kinds without an entry get only the metadata checks, as Istio's EmptyValidate.
import { kindKey } from "../kinds.ts";
import { validateAuthorizationPolicy } from "./authorizationpolicy.ts";
import { validateDestinationRule } from "./destinationrule.ts";
import { validateEnvoyFilter } from "./envoyfilter.ts";
import type { SemanticValidator } from "./findings.ts";
import { validateGateway } from "./gateway.ts";
import { validatePeerAuthentication } from "./peerauthentication.ts";
import { validateProxyConfig } from "./proxyconfig.ts";
import { validateRequestAuthentication } from "./requestauthentication.ts";
import { validateServiceEntry } from "./serviceentry.ts";
import { validateSidecar } from "./sidecar.ts";
import { validateTelemetry } from "./telemetry.ts";
import { validateTrafficExtension } from "./trafficextension.ts";
import { validateVirtualService } from "./virtualservice.ts";
import { validateWasmPlugin } from "./wasmplugin.ts";
import { validateWorkloadEntry } from "./workloadentry.ts";
import { validateWorkloadGroup } from "./workloadgroup.ts";

export { DEFAULT_CONTEXT, Findings, type SemanticValidator, type ValidationContext } from "./findings.ts";

const NET = "networking.istio.io";
const SEC = "security.istio.io";

export const SEMANTIC_VALIDATORS: ReadonlyMap<string, SemanticValidator> = new Map<string, SemanticValidator>([
  [kindKey(NET, "DestinationRule"), validateDestinationRule],
  [kindKey(NET, "Gateway"), validateGateway],
  [kindKey(NET, "Sidecar"), validateSidecar],
  [kindKey(NET, "ServiceEntry"), validateServiceEntry],
  [kindKey(NET, "WorkloadEntry"), validateWorkloadEntry],
  [kindKey(NET, "WorkloadGroup"), validateWorkloadGroup],
  [kindKey(NET, "ProxyConfig"), validateProxyConfig],
  [kindKey(NET, "VirtualService"), validateVirtualService],
  [kindKey(NET, "EnvoyFilter"), validateEnvoyFilter],
  [kindKey(SEC, "AuthorizationPolicy"), validateAuthorizationPolicy],
  [kindKey(SEC, "PeerAuthentication"), validatePeerAuthentication],
  [kindKey(SEC, "RequestAuthentication"), validateRequestAuthentication],
  [kindKey("telemetry.istio.io", "Telemetry"), validateTelemetry],
  [kindKey("extensions.istio.io", "WasmPlugin"), validateWasmPlugin],
  [kindKey("extensions.istio.io", "TrafficExtension"), validateTrafficExtension],
]);

export function semanticValidator(group: string, kind: string): SemanticValidator | undefined {
  return SEMANTIC_VALIDATORS.get(kindKey(group, kind));
}
export { decodePatchValue, patchValueViolations } from "./envoyfilter-patch.ts";
export { findUnreachableRules, type UnreachableRule, unreachableRuleMessage } from "./virtualservice-unreachable.ts";
