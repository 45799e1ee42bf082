// A Cluster message written as a plain object of exactly the shape protobuf-es create() gives (every
// field's zero value, message fields absent until set): create() walks all of Cluster's members and
// converts each init value, which was most of the cost of building a cluster. The builders set the
// fields they need on it, as messages; cluster.test.ts checks the shape against create().
import { cluster } from "../../api/index.ts";

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
  };
}
