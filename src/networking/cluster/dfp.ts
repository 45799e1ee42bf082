// The cluster of one port of a DYNAMIC_DNS wildcard ServiceEntry (Istio's buildDFPCluster and
// applyDestinationRule): `outbound|<port>||<*.host>` of type envoy.clusters.dynamic_forward_proxy, which
// connects to whatever the DNS cache resolved for the requested name. HTTP, TLS, GRPC and HTTP2 ports
// only; no subsets, no load balancer settings (the cluster provides its hosts), and a connect timeout
// only when the DestinationRule sets one.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { cluster, core, dfpCluster, packAny } from "../../api/index.ts";
import type { ServiceProtocol } from "../../registry/index.ts";
import { NO_MEMOS } from "../../util/index.ts";
import { DFP_CLUSTER_TYPE, forwardProxyDnsCache } from "../dfp.ts";
import { toDuration } from "../duration.ts";
import { applyConnectionPool, shouldUpgradeToH2 } from "./connectionpool.ts";
import { clusterMessage } from "./message.ts";
import { istioClusterMetadata } from "./metadata.ts";
import { TCP_CLUSTER_METADATA_EXCHANGE } from "./metadataexchange.ts";
import { outboundClusterName } from "./names.ts";
import { applyOutlierDetection } from "./outlier.ts";
import { effectiveTrafficPolicy } from "./policy.ts";
import { type HttpOptionsDraft, httpProtocolOptionsAny, isHttp2Protocol } from "./protocol.ts";
import { applyUpstreamProxyProtocol } from "./proxyprotocol.ts";
import { buildUpstreamTls, expandTrustDomains } from "./tls.ts";
import type { OutboundClusterInput } from "./types.ts";

const FORWARD_PROXY_PROTOCOLS: ReadonlySet<ServiceProtocol> = new Set(["HTTP", "TLS", "GRPC", "HTTP2"]);

export function buildForwardProxyClusters(input: OutboundClusterInput): cluster.Cluster[] {
  const { service, port, proxy, mesh } = input;
  if (!FORWARD_PROXY_PROTOCOLS.has(port.protocol)) return [];
  const rule = input.destinationRule;
  const memos = input.memos ?? NO_MEMOS;
  const name = outboundClusterName(memos, port.port, "", service.hostname);
  const policy = effectiveTrafficPolicy(rule?.spec, port.port, "");
  const common: MessageInitShape<typeof cluster.Cluster_CommonLbConfigSchema> = {};
  const draft = clusterMessage(name);
  draft.lbPolicy = cluster.Cluster_LbPolicy.CLUSTER_PROVIDED;
  draft.altStatName = `${name};`;
  const http: HttpOptionsDraft = {};
  if (isHttp2Protocol(port.protocol)) http.upstream = "http2";
  applyConnectionPool(memos, draft, http, policy?.connectionPool, mesh, policy?.retryBudget);
  // Istio's forward proxy cluster starts without the mesh connect timeout.
  const connectTimeout = toDuration(policy?.connectionPool?.tcp?.connectTimeout);
  if (connectTimeout) draft.connectTimeout = connectTimeout;
  else delete draft.connectTimeout;
  if (shouldUpgradeToH2(port, policy?.connectionPool, mesh)) http.upstream = "http2";
  applyOutlierDetection(draft, common, policy?.outlierDetection);
  if (Object.keys(common).length > 0) draft.commonLbConfig = create(cluster.Cluster_CommonLbConfigSchema, common);

  const upstreamTls = buildUpstreamTls({
    clusterName: name,
    tls: policy?.tls,
    serviceAccounts: expandTrustDomains(service.serviceAccounts, mesh),
    istioSni: "",
    autoMtls:
      mesh.enableAutoMtls !== false &&
      !service.meshExternal &&
      input.serviceMtlsMode !== "DISABLE" &&
      input.serviceMtlsMode !== "UNKNOWN",
    external: service.registry === "External",
    http2: http.upstream === "http2",
    originalDst: false,
    credentialNameAllowed: proxy.type === "router" || rule?.spec.workloadSelector !== undefined,
    dynamicForwardProxy: true,
    mesh,
  });
  if (upstreamTls.transportSocket) draft.transportSocket = upstreamTls.transportSocket;
  if (upstreamTls.transportSocketMatches) draft.transportSocketMatches = upstreamTls.transportSocketMatches;
  applyUpstreamProxyProtocol(draft, policy?.proxyProtocol);
  if (upstreamTls.autoSni) http.autoSni = true;
  if (upstreamTls.autoSanValidation) http.autoSanValidation = true;
  draft.clusterDiscoveryType = {
    case: "clusterType",
    value: create(cluster.Cluster_CustomClusterTypeSchema, {
      name: DFP_CLUSTER_TYPE,
      typedConfig: packAny(
        dfpCluster.ClusterConfigSchema,
        create(dfpCluster.ClusterConfigSchema, {
          clusterImplementationSpecifier: {
            case: "dnsCacheConfig",
            value: forwardProxyDnsCache(service.hostname, proxy.ipAddresses),
          },
          allowInsecureClusterOptions: upstreamTls.allowInsecureClusterOptions === true,
        }),
      ),
    }),
  };
  const protocolOptions = httpProtocolOptionsAny(memos, http);
  if (protocolOptions) draft.typedExtensionProtocolOptions = protocolOptions;
  draft.filters = [TCP_CLUSTER_METADATA_EXCHANGE];
  const metadata = istioClusterMetadata({
    services: [],
    destinationRule: rule,
    alpnOverride: upstreamTls.alpnOverride,
    external: service.meshExternal,
  });
  if (Object.keys(metadata.istio).length > 0)
    draft.metadata = create(core.MetadataSchema, { filterMetadata: metadata });
  return [draft];
}
