// Which Istio Gateways a router proxy serves (Istio's PushContext.mergeGateways selection):
// Gateways translated from Gateway API name their services (internal.istio.io/gateway-service)
// and apply when the proxy backs one of them in the Gateway's namespace; others apply when their
// selector labels are all on the proxy (no selector: every gateway proxy). With
// PILOT_SCOPE_GATEWAY_TO_NAMESPACE only Gateways of the proxy's namespace are considered.
import type { Gateway } from "../config/types/index.ts";
import { labelsContain } from "../krt/index.ts";
import type { Service, ServicePort } from "../registry/index.ts";
import { namespaceOf } from "./config-meta.ts";

/** A service port of the proxy's workload: how a Gateway server port becomes the port listened on. */
export interface ServiceTarget {
  service: Service;
  port: ServicePort;
}

/** A selected Gateway and the targets its server ports resolve against. */
export interface SelectedGateway {
  gateway: Gateway;
  /** Selected by labels: a port no target declares is listened on as written. */
  legacySelector: boolean;
  targets: readonly ServiceTarget[];
}

export const GATEWAY_SERVICE_ANNOTATION = "internal.istio.io/gateway-service";
export const PARENT_NAMESPACE_ANNOTATION = "internal.istio.io/parent-namespace";

export interface GatewayProxy {
  configNamespace: string;
  labels: Readonly<Record<string, string>>;
}

export function selectGateways(
  gateways: readonly Gateway[],
  proxy: GatewayProxy,
  targets: readonly ServiceTarget[],
  scopeToNamespace: boolean,
): SelectedGateway[] {
  const selected: SelectedGateway[] = [];
  for (const gateway of gateways) {
    if (scopeToNamespace && namespaceOf(gateway) !== proxy.configNamespace) continue;
    const annotations = gateway.metadata.annotations ?? {};
    const services = annotations[GATEWAY_SERVICE_ANNOTATION];
    if (services !== undefined) {
      const known = new Set(services.split(","));
      const namespace = annotations[PARENT_NAMESPACE_ANNOTATION] || namespaceOf(gateway);
      const matching = targets.filter((t) => known.has(t.service.hostname) && t.service.namespace === namespace);
      if (matching.length > 0) selected.push({ gateway, legacySelector: false, targets: matching });
      continue;
    }
    const selector = gateway.spec?.selector ?? {};
    if (labelsContain(proxy.labels, selector)) selected.push({ gateway, legacySelector: true, targets });
  }
  return selected;
}
