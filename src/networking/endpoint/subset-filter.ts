// Which endpoints a cluster's load assignment carries (Istio's endpoint_builder.go filters): the
// cluster's service port, the subset's labels, and the health states Envoy should see.
import { type Labels, labelsContain } from "../../krt/index.ts";
import type { HealthStatus, ServiceEndpoint } from "../../registry/index.ts";

export interface EndpointSelection {
  /** The service port the cluster is for. */
  port: number;
  /** A DestinationRule subset's labels: endpoints must carry all of them. */
  subsetLabels?: Labels;
  /** Send not-ready endpoints as UNHEALTHY (Istio only does so for services that support unhealthy endpoints). */
  includeUnhealthy?: boolean;
  /** Send draining endpoints (Istio only does so for persistent-session services). */
  includeDraining?: boolean;
}

export function selectEndpoints(
  endpoints: readonly ServiceEndpoint[],
  selection: EndpointSelection,
): ServiceEndpoint[] {
  return endpoints.filter(
    (ep) =>
      ep.servicePort === selection.port &&
      healthAllowed(ep.health, selection) &&
      (!selection.subsetLabels || labelsContain(ep.labels, selection.subsetLabels)),
  );
}

function healthAllowed(health: HealthStatus, selection: EndpointSelection): boolean {
  switch (health) {
    case "Unknown":
    case "Healthy":
      return true;
    case "UnHealthy":
      return selection.includeUnhealthy === true;
    case "Draining":
      return selection.includeDraining === true;
    default:
      return false;
  }
}
