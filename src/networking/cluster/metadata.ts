// Cluster metadata and stat names as Istio sets them (util.AddConfigInfoMetadata, addTelemetryMetadata,
// AddSubsetToMetadata, AddALPNOverrideToMetadata; telemetry.BuildStatPrefix).
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { core, preEncoded } from "../../api/index.ts";
import type { Service } from "../../registry/index.ts";
import { type Memos, mapTable, weakTable } from "../../util/index.ts";
import { metadataMessage } from "./message.ts";

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

// An outbound cluster's metadata reads only its service, rule name, subset and ALPN override: the
// clusters of a service's ports (and proxies) share one message per such tuple, built once per service
// object, and encoded once.
interface ServiceMetadata {
  /** Without rule, subset or ALPN override: most clusters, found without building a key. */
  plain?: core.Metadata;
  byKey: Map<string, core.Metadata>;
}

const OUTBOUND_METADATA = weakTable<Service, ServiceMetadata>("cluster/outboundMetadata");
/** A bound per service, as rules and subsets come and go with config; the few in use are built again. */
const MAX_METADATA_PER_SERVICE = 64;

/** The metadata of an outbound (or SNI-DNAT) cluster of `service`; the same message for the same inputs. */
export function outboundClusterMetadata(
  memos: Memos,
  service: Service,
  destinationRule: { name: string; namespace: string } | undefined,
  subset: string,
  alpnOverride: boolean,
): core.Metadata {
  const outboundMetadata = memos.weak(OUTBOUND_METADATA);
  let shared = outboundMetadata.get(service);
  if (!shared) {
    shared = { byKey: new Map() };
    outboundMetadata.set(service, shared);
  }
  if (!destinationRule && subset === "" && !alpnOverride) {
    shared.plain ??= serviceMetadata(service, undefined, "", false);
    return shared.plain;
  }
  const key = `${destinationRule ? `${destinationRule.namespace}/${destinationRule.name}` : ""}|${subset}|${alpnOverride}`;
  let metadata = shared.byKey.get(key);
  if (!metadata) {
    metadata = serviceMetadata(service, destinationRule, subset, alpnOverride);
    if (shared.byKey.size >= MAX_METADATA_PER_SERVICE) shared.byKey.clear();
    shared.byKey.set(key, metadata);
  }
  return metadata;
}

/** The message, pre-encoded: each cluster holding it copies its bytes instead of encoding the Struct again. */
function serviceMetadata(
  service: Service,
  destinationRule: { name: string; namespace: string } | undefined,
  subset: string,
  alpnOverride: boolean,
): core.Metadata {
  // Only the service's main cluster says so, not its subsets' (ClusterBuilder.buildCluster).
  const external = service.meshExternal && subset === "";
  const filterMetadata = istioClusterMetadata({ services: [service], destinationRule, subset, alpnOverride, external });
  return preEncoded(core.MetadataSchema, metadataMessage(filterMetadata));
}

export interface StatNameInput {
  service: Service;
  subset: string;
  port: number;
  portName: string;
  targetPort?: number;
}

// Each cluster name's default stat name, kept as the names are (names.ts); at most 100,000.
const DELIMITED_STAT_NAMES = mapTable<string, string>("cluster/delimitedStatNames");

/** `<cluster name>;` (Istio's DelimitedStatsPrefix). */
function delimitedStatName(memos: Memos, clusterName: string): string {
  const delimitedStatNames = memos.map(DELIMITED_STAT_NAMES);
  let statName = delimitedStatNames.get(clusterName);
  if (statName === undefined) {
    if (delimitedStatNames.size >= 100_000) delimitedStatNames.clear();
    statName = `${clusterName};`;
    delimitedStatNames.set(clusterName, statName);
  }
  return statName;
}

/**
 * alt_stat_name: the mesh's cluster stat-name pattern expanded (statPrefix), or the cluster name, plus
 * Istio's `;` delimiter.
 */
export function altStatName(
  memos: Memos,
  clusterName: string,
  pattern: string | undefined,
  input?: StatNameInput,
): string {
  if (!pattern || !input) return delimitedStatName(memos, clusterName);
  return `${statPrefix(pattern, input)};`;
}

/**
 * A stat-name pattern expanded for a service (Istio's BuildStatPrefix): a Kubernetes service is known
 * by its name, anything else by its host.
 */
export function statPrefix(pattern: string, input: StatNameInput): string {
  const { service } = input;
  const kube = service.registry === "Kubernetes";
  return expandStatPattern(pattern, {
    service: kube ? `${service.name}.${service.namespace}` : service.hostname,
    serviceName: kube ? service.name : service.hostname,
    fqdn: service.hostname,
    subset: input.subset,
    port: input.port,
    portName: input.portName,
    targetPort: input.targetPort ?? 0,
  });
}

/** What a stat-name pattern's variables stand for; without a target port %TARGET_PORT% stays (Istio's inbound prefix). */
export interface StatNames {
  service: string;
  serviceName: string;
  fqdn: string;
  subset: string;
  port: number;
  portName: string;
  targetPort?: number;
}

/** %SERVICE%, %SERVICE_NAME%, %SERVICE_FQDN%, %SUBSET_NAME%, %TARGET_PORT%, %SERVICE_PORT%, %SERVICE_PORT_NAME%, in Istio's order. */
export function expandStatPattern(pattern: string, names: StatNames): string {
  let out = pattern
    .replaceAll("%SERVICE%", names.service)
    .replaceAll("%SERVICE_NAME%", names.serviceName)
    .replaceAll("%SERVICE_FQDN%", names.fqdn)
    .replaceAll("%SUBSET_NAME%", names.subset);
  if (names.targetPort !== undefined) out = out.replaceAll("%TARGET_PORT%", String(names.targetPort));
  return out.replaceAll("%SERVICE_PORT%", String(names.port)).replaceAll("%SERVICE_PORT_NAME%", names.portName);
}
