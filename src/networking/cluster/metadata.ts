// Cluster metadata and stat names as Istio sets them (util.AddConfigInfoMetadata, addTelemetryMetadata,
// AddSubsetToMetadata, AddALPNOverrideToMetadata; telemetry.BuildStatPrefix).
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Service } from "../../registry/index.ts";

export interface ClusterMetadataInput {
  /** The services behind the cluster (one for outbound; all on the port for inbound). */
  services: readonly Service[];
  /** The DestinationRule applied, as `namespace/name`. */
  destinationRule?: { name: string; namespace: string };
  subset?: string;
  alpnOverride?: boolean;
  external?: boolean;
}

/** `filter_metadata.istio` of a cluster; keys in sorted order, as Go renders the Struct. */
export function istioClusterMetadata(input: ClusterMetadataInput): Record<string, JsonObject> {
  const istio: Record<string, JsonValue> = {};
  if (input.alpnOverride) istio.alpn_override = "false";
  if (input.destinationRule) {
    const { namespace, name } = input.destinationRule;
    istio.config = `/apis/networking.istio.io/v1/namespaces/${namespace}/destination-rule/${name}`;
  }
  if (input.external) istio.external = true;
  if (input.services.length > 0) {
    istio.services = input.services.map((s) => ({ host: s.hostname, name: s.name, namespace: s.namespace }));
  }
  if (input.subset) istio.subset = input.subset;
  return { istio };
}

export interface StatNameInput {
  service: Service;
  subset: string;
  port: number;
  portName: string;
  targetPort?: number;
}

/**
 * alt_stat_name: the mesh's cluster stat-name pattern expanded (%SERVICE%, %SERVICE_FQDN%,
 * %SERVICE_PORT%, %SERVICE_PORT_NAME%, %SUBSET_NAME%, %TARGET_PORT%), or the cluster name, plus Istio's `;` delimiter.
 */
export function altStatName(clusterName: string, pattern: string | undefined, input?: StatNameInput): string {
  if (!pattern || !input) return `${clusterName};`;
  const { service } = input;
  const short = service.registry === "Kubernetes" ? `${service.name}.${service.namespace}` : service.hostname;
  const expanded = pattern
    .replaceAll("%SERVICE_FQDN%", service.hostname)
    .replaceAll("%SERVICE_PORT_NAME%", input.portName)
    .replaceAll("%SERVICE_PORT%", String(input.port))
    .replaceAll("%SUBSET_NAME%", input.subset)
    .replaceAll("%TARGET_PORT%", String(input.targetPort ?? 0))
    .replaceAll("%SERVICE%", short);
  return `${expanded};`;
}
