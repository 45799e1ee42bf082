// One Envoy LbEndpoint per Istio endpoint (Istio's buildEnvoyLbEndpoint and util.AppendLbEndpointMetadata):
// address, health, weight, and the metadata the client sidecar reads: `envoy.transport_socket_match`
// selects the mTLS socket of auto-mTLS clusters, `istio.workload` names the workload for telemetry.
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import { core, type endpoint } from "../../api/index.ts";
import type { Labels } from "../../krt/index.ts";
import type { HealthStatus, ServiceEndpoint } from "../../registry/index.ts";

export type LbEndpointInit = MessageInitShape<typeof endpoint.LbEndpointSchema>;

export const TRANSPORT_SOCKET_MATCH_KEY = "envoy.transport_socket_match";
export const ISTIO_METADATA_KEY = "istio";

export function envoyHealth(health: HealthStatus): core.HealthStatus {
  switch (health) {
    case "Healthy":
      return core.HealthStatus.HEALTHY;
    case "UnHealthy":
      return core.HealthStatus.UNHEALTHY;
    case "Draining":
      return core.HealthStatus.DRAINING;
    default:
      return core.HealthStatus.UNKNOWN;
  }
}

/** An Envoy address: a socket address, or a pipe for `unix://` endpoints. */
export function endpointAddress(address: string, port: number): MessageInitShape<typeof core.AddressSchema> {
  if (address.startsWith("unix://")) return { address: { case: "pipe", value: { path: address.slice(7) } } };
  return { address: { case: "socketAddress", value: { address, portSpecifier: { case: "portValue", value: port } } } };
}

export function buildLbEndpoint(ep: ServiceEndpoint, mtlsEnabled: boolean): LbEndpointInit {
  return {
    hostIdentifier: { case: "endpoint", value: { address: endpointAddress(ep.address, ep.port) } },
    healthStatus: envoyHealth(ep.health),
    loadBalancingWeight: endpointWeight(ep),
    metadata: {
      filterMetadata: endpointMetadata({
        tlsMode: mtlsEnabled ? ep.tlsMode : "",
        workloadName: ep.workloadName,
        namespace: ep.workloadNamespace || ep.namespace,
        labels: ep.labels,
        clusterId: ep.clusterId,
      }),
    },
  };
}

export function endpointWeight(ep: ServiceEndpoint): number {
  return ep.weight > 0 ? ep.weight : 1;
}

export interface EndpointMetadataInput {
  tlsMode: string;
  workloadName: string;
  namespace: string;
  labels: Labels;
  clusterId: string;
}

/** The filter metadata of an endpoint: tlsMode (unless empty or `disabled`) and the compressed workload telemetry. */
export function endpointMetadata(input: EndpointMetadataInput): Record<string, JsonObject> {
  const out: Record<string, JsonObject> = {};
  if (input.tlsMode !== "" && input.tlsMode !== "disabled")
    out[TRANSPORT_SOCKET_MATCH_KEY] = { tlsMode: input.tlsMode };
  const { name, revision } = canonicalService(input.labels, input.workloadName);
  out[ISTIO_METADATA_KEY] = {
    workload: [input.workloadName, input.namespace, name, revision === "latest" ? "" : revision, input.clusterId].join(
      ";",
    ),
  };
  return out;
}

/** Istio's kube labels.CanonicalService: the canonical name and revision of a workload, with its defaults. */
export function canonicalService(labels: Labels, workloadName: string): { name: string; revision: string } {
  const name =
    labels["service.istio.io/canonical-name"] || labels["app.kubernetes.io/name"] || labels.app || workloadName;
  const revision =
    labels["service.istio.io/canonical-revision"] || labels["app.kubernetes.io/version"] || labels.version || "latest";
  return { name, revision };
}
