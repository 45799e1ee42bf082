// Messages built per cluster, written as plain objects of the shape protobuf-es create() gives (every
// field's zero value): create() walks all of a message's members and converts each init value, which
// was most of the cost of building a cluster. The builders set the fields they need on a Cluster, as
// messages; cluster.test.ts checks each shape against create().
import type { JsonObject } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { cluster, type core } from "../../api/index.ts";

/**
 * A Cluster with every field at its zero value. The message fields the builders set are present too,
 * as undefined (unset, as create() leaves them absent): every cluster then has one hidden class,
 * whatever its builder set, and the encoder's property reads stay monomorphic (with five shapes in one
 * response, V8's limit of four, they went megamorphic and CDS encoding took 1.2x as long).
 */
export function clusterMessage(name: string): cluster.Cluster {
  return {
    $typeName: "envoy.config.cluster.v3.Cluster",
    transportSocketMatches: [],
    name,
    altStatName: "",
    clusterDiscoveryType: { case: undefined },
    lbPolicy: cluster.Cluster_LbPolicy.ROUND_ROBIN,
    healthChecks: [],
    typedExtensionProtocolOptions: {},
    respectDnsTtl: false,
    dnsLookupFamily: cluster.Cluster_DnsLookupFamily.AUTO,
    dnsResolvers: [],
    useTcpForDnsLookups: false,
    lbConfig: { case: undefined },
    protocolSelection: cluster.Cluster_ClusterProtocolSelection.USE_CONFIGURED_PROTOCOL,
    closeConnectionsOnHostHealthFailure: false,
    ignoreHealthOnHostRemoval: false,
    filters: [],
    lrsReportEndpointMetrics: [],
    trackTimeoutBudgets: false,
    connectionPoolPerDownstreamConnection: false,
    edsClusterConfig: undefined,
    connectTimeout: undefined,
    loadAssignment: undefined,
    maxRequestsPerConnection: undefined,
    circuitBreakers: undefined,
    upstreamHttpProtocolOptions: undefined,
    commonHttpProtocolOptions: undefined,
    httpProtocolOptions: undefined,
    http2ProtocolOptions: undefined,
    dnsRefreshRate: undefined,
    typedDnsResolverConfig: undefined,
    outlierDetection: undefined,
    cleanupInterval: undefined,
    upstreamBindConfig: undefined,
    commonLbConfig: undefined,
    transportSocket: undefined,
    metadata: undefined,
    upstreamConnectionOptions: undefined,
  };
}

// The small messages every cluster carries, written the same way.

export function anyMessage(typeUrl: string, value: Uint8Array): Any {
  return { $typeName: "google.protobuf.Any", typeUrl, value };
}

export function transportSocketMessage(name: string, config: Any): core.TransportSocket {
  return {
    $typeName: "envoy.config.core.v3.TransportSocket",
    name,
    configType: { case: "typedConfig", value: config },
  };
}

export function transportSocketMatchMessage(
  name: string,
  match: JsonObject,
  transportSocket: core.TransportSocket,
): cluster.Cluster_TransportSocketMatch {
  return { $typeName: "envoy.config.cluster.v3.Cluster.TransportSocketMatch", name, match, transportSocket };
}

export function edsClusterConfigMessage(
  serviceName: string,
  edsConfig: core.ConfigSource,
): cluster.Cluster_EdsClusterConfig {
  return { $typeName: "envoy.config.cluster.v3.Cluster.EdsClusterConfig", serviceName, edsConfig };
}

export function metadataMessage(filterMetadata: Record<string, JsonObject>): core.Metadata {
  return { $typeName: "envoy.config.core.v3.Metadata", filterMetadata, typedFilterMetadata: {} };
}
