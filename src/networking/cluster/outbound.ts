// Outbound clusters of one service port: `outbound|<port>||<host>` and one per DestinationRule subset
// (Istio's buildOutboundClusters, ClusterBuilder.buildCluster/buildSubsetCluster, applyTrafficPolicy).
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { cluster, core, endpoint, preEncoded } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { DestinationRuleTrafficPolicy } from "../../config/types/index.ts";
import type { ProxyNode } from "../../model/index.ts";
import type { Service, ServiceEndpoint } from "../../registry/index.ts";
import { type Memos, NO_MEMOS, weakTable } from "../../util/index.ts";
import { isDynamicForwardProxy } from "../dfp.ts";
import { localityGroups, localityLbSetting } from "../endpoint/index.ts";
import { PERSISTENT_SESSION_HEADER_LABEL, PERSISTENT_SESSION_LABEL } from "../httpfilter/index.ts";
import { applyConnectionPool, shouldUpgradeToH2 } from "./connectionpool.ts";
import { buildForwardProxyClusters } from "./dfp.ts";
import { applyDnsSettings } from "./dns.ts";
import { applyLoadBalancer, applyLocalityWeightedConfig, discoveryType } from "./loadbalancer.ts";
import { clusterMessage, edsClusterConfigMessage } from "./message.ts";
import { altStatName, outboundClusterMetadata } from "./metadata.ts";
import { TCP_CLUSTER_METADATA_EXCHANGE } from "./metadataexchange.ts";
import { outboundClusterName, sniDnatClusterName } from "./names.ts";
import { applyOutlierDetection } from "./outlier.ts";
import { effectiveTrafficPolicy } from "./policy.ts";
import { type HttpOptionsDraft, httpProtocolOptionsAny, isHttp2Protocol } from "./protocol.ts";
import { applyUpstreamProxyProtocol } from "./proxyprotocol.ts";
import { buildUpstreamTls, expandTrustDomains, type UpstreamTls } from "./tls.ts";
import type { OutboundClusterInput, ServiceMtlsMode } from "./types.ts";

type CommonLbInit = MessageInitShape<typeof cluster.Cluster_CommonLbConfigSchema>;

const DiscoveryType = cluster.Cluster_DiscoveryType;

// Shared by every cluster: generated messages are never changed once built.
const EDS_OVER_ADS = preEncoded(
  core.ConfigSourceSchema,
  create(core.ConfigSourceSchema, {
    configSourceSpecifier: { case: "ads", value: {} },
    initialFetchTimeout: {},
    resourceApiVersion: core.ApiVersion.V3,
  }),
);
/** The common LB config of a cluster that sets none of it. */
export const EMPTY_COMMON_LB_CONFIG = preEncoded(
  cluster.Cluster_CommonLbConfigSchema,
  create(cluster.Cluster_CommonLbConfigSchema),
);

/** What most outbound clusters set: panic mode off, and nothing else (one shared, pre-encoded message). */
const PANIC_OFF_COMMON_LB_CONFIG = preEncoded(
  cluster.Cluster_CommonLbConfigSchema,
  create(cluster.Cluster_CommonLbConfigSchema, { healthyPanicThreshold: { value: 0 } }),
);

/**
 * The clusters of one service port, the default one first, then one per DestinationRule subset. UDP
 * ports and ExternalName aliases get none, DYNAMIC_DNS wildcard hosts a dynamic forward proxy cluster;
 * a DNS cluster without endpoints is left out.
 */
export function buildOutboundClusters(input: OutboundClusterInput): cluster.Cluster[] {
  const { service, port } = input;
  if (isDynamicForwardProxy(service)) return buildForwardProxyClusters(input);
  const type = outboundDiscoveryType(service, input.proxy);
  if (port.protocol === "UDP" || type === undefined) return [];
  return buildWithSubsets(input, type, false);
}

/**
 * A gateway's SNI-DNAT clusters for AUTO_PASSTHROUGH servers, `outbound_.<port>_.<subset>_.<host>`:
 * like the outbound ones, but without TLS (the client's mTLS passes through). Not for mesh-external services.
 */
export function buildSniDnatClusters(input: OutboundClusterInput): cluster.Cluster[] {
  const type = outboundDiscoveryType(input.service, input.proxy);
  if (input.port.protocol === "UDP" || input.service.meshExternal || type === undefined) return [];
  return buildWithSubsets(input, type, true);
}

function buildWithSubsets(
  input: OutboundClusterInput,
  type: cluster.Cluster_DiscoveryType,
  sniDnat: boolean,
): cluster.Cluster[] {
  const subsets = input.destinationRule?.spec.subsets ?? [];
  const memos = input.memos ?? NO_MEMOS;
  // Istio mTLS SANs, the same for every subset of the port; SNI-DNAT clusters have no TLS.
  const identities = sniDnat ? [] : serviceIdentities(memos, input);
  const clusters = [buildOne(memos, input, type, "", undefined, sniDnat, identities)];
  for (const subset of subsets) {
    clusters.push(buildOne(memos, input, type, subset.name, subset.labels ?? {}, sniDnat, identities));
  }
  return clusters.filter((c): c is cluster.Cluster => c !== undefined);
}

/** Istio's convertResolution: the discovery type of a service's clusters for this proxy. */
export function outboundDiscoveryType(service: Service, proxy: ProxyNode): cluster.Cluster_DiscoveryType | undefined {
  switch (service.resolution) {
    case "ClientSideLB":
      return DiscoveryType.EDS;
    case "DNSLB":
      return DiscoveryType.STRICT_DNS;
    case "DNSRoundRobinLB":
      return DiscoveryType.LOGICAL_DNS;
    case "Passthrough":
      // Gateways have no original destination to pass through to: they balance over the endpoints.
      return proxy.type === "sidecar" ? DiscoveryType.ORIGINAL_DST : DiscoveryType.EDS;
    default:
      return undefined;
  }
}

function buildOne(
  memos: Memos,
  input: OutboundClusterInput,
  type: cluster.Cluster_DiscoveryType,
  subset: string,
  subsetLabels: Record<string, string> | undefined,
  sniDnat: boolean,
  identities: readonly string[],
): cluster.Cluster | undefined {
  const { service, port, proxy, mesh } = input;
  const rule = input.destinationRule;
  const name = sniDnat
    ? sniDnatClusterName(memos, port.port, subset, service.hostname)
    : outboundClusterName(memos, port.port, subset, service.hostname);
  const policy = effectiveTrafficPolicy(rule?.spec, port.port, subset);
  const statName = altStatName(memos, name, mesh.outboundClusterStatName, {
    service,
    subset,
    port: port.port,
    portName: port.name,
    // Istio names no target port for outbound clusters (%TARGET_PORT% is 0).
  });
  const built = buildServiceCluster(memos, input, type, name, statName, subsetLabels, policy);
  if (!built) return undefined;
  const { draft, http } = built;

  const finalType = discoveryType(draft);
  const mtlsMode = inferredMtlsMode(input, subset);
  const upstreamTls: UpstreamTls = sniDnat
    ? { alpnOverride: false }
    : buildUpstreamTls({
        clusterName: name,
        tls: policy?.tls,
        serviceAccounts: identities,
        istioSni: sniDnatClusterName(memos, port.port, subset, service.hostname),
        autoMtls:
          mesh.enableAutoMtls !== false && !service.meshExternal && mtlsMode !== "DISABLE" && mtlsMode !== "UNKNOWN",
        external: service.registry === "External",
        http2: http.upstream === "http2",
        originalDst: finalType === DiscoveryType.ORIGINAL_DST,
        credentialNameAllowed: proxy.type !== "sidecar" || rule?.spec.workloadSelector !== undefined,
        mesh,
        istioTlsContexts: input.istioTlsContexts,
      });
  if (upstreamTls.transportSocket) draft.transportSocket = upstreamTls.transportSocket;
  if (upstreamTls.transportSocketMatches) draft.transportSocketMatches = upstreamTls.transportSocketMatches;
  if (!sniDnat) applyUpstreamProxyProtocol(draft, policy?.proxyProtocol);
  if (upstreamTls.autoSni) http.autoSni = true;
  if (upstreamTls.autoSanValidation) http.autoSanValidation = true;
  draft.filters = [TCP_CLUSTER_METADATA_EXCHANGE];
  finishServiceCluster(memos, built);
  draft.metadata = outboundClusterMetadata(memos, service, rule, subset, upstreamTls.alpnOverride);
  return draft;
}

/** A service cluster being built: the cluster, its HTTP protocol options and common LB config so far. */
export interface ServiceClusterDraft {
  draft: cluster.Cluster;
  http: HttpOptionsDraft;
  common: CommonLbInit;
}

/**
 * What every cluster of a service port shares (Istio's buildCluster and the traffic policy's
 * connection pool, h2 upgrade, outlier detection and load balancer): undefined for a DNS cluster
 * without endpoints. The caller adds TLS, filters and metadata, then finishServiceCluster.
 */
export function buildServiceCluster(
  memos: Memos,
  input: OutboundClusterInput,
  type: cluster.Cluster_DiscoveryType,
  name: string,
  statName: string,
  subsetLabels: Record<string, string> | undefined,
  policy: DestinationRuleTrafficPolicy | undefined,
): ServiceClusterDraft | undefined {
  const { service, port, proxy, mesh } = input;
  const common: CommonLbInit = {};
  const draft = clusterMessage(name);
  draft.clusterDiscoveryType = { case: "type", value: type };
  draft.altStatName = statName;
  if (supportsDrainingEndpoints(service)) {
    // Persistent sessions keep reaching a draining endpoint they are pinned to.
    common.overrideHostStatus = {
      statuses: [
        core.HealthStatus.HEALTHY,
        core.HealthStatus.DRAINING,
        core.HealthStatus.UNKNOWN,
        core.HealthStatus.DEGRADED,
      ],
    };
  }

  if (type === DiscoveryType.STRICT_DNS || type === DiscoveryType.LOGICAL_DNS) {
    let endpoints = localityGroups({
      clusterName: name,
      port: port.port,
      endpoints: input.endpoints,
      subsetLabels,
      proxy,
      mesh,
      policy,
      inline: true,
      memos,
    });
    // LOGICAL_DNS resolves one host: Envoy accepts exactly one endpoint.
    if (type === DiscoveryType.LOGICAL_DNS && endpoints.length > 0) {
      const first = create(endpoint.LocalityLbEndpointsSchema, endpoints[0]);
      first.lbEndpoints = first.lbEndpoints.slice(0, 1);
      first.loadBalancingWeight = first.lbEndpoints[0]?.loadBalancingWeight;
      endpoints = [first];
    }
    if (endpoints.length === 0) {
      const typeName = type === DiscoveryType.STRICT_DNS ? "STRICT_DNS" : "LOGICAL_DNS";
      input.report?.(
        "pilot_dns_cluster_without_endpoints",
        name,
        `${typeName} cluster without endpoints ${name} found while pushing CDS`,
      );
      return undefined;
    }
    applyDnsSettings(draft, proxy.ipAddresses, mesh);
    draft.loadAssignment = create(endpoint.ClusterLoadAssignmentSchema, { clusterName: name, endpoints });
  }

  const http: HttpOptionsDraft = {};
  if (isHttp2Protocol(port.protocol)) http.upstream = "http2";
  // A sniffed port's upstream speaks what the client spoke (sidecars and waypoints; gateways do not sniff).
  else if ((proxy.type === "sidecar" || proxy.type === "waypoint") && port.protocol === "UnsupportedProtocol") {
    http.upstream = "downstream";
  }
  // Before the connection pool, whose HTTP/2 settings (maxConcurrentStreams) need the upgrade (applyH2Upgrade).
  if (shouldUpgradeToH2(port, policy?.connectionPool, mesh)) http.upstream = "http2";
  applyConnectionPool(memos, draft, http, policy?.connectionPool, mesh, policy?.retryBudget);
  applyOutlierDetection(draft, common, policy?.outlierDetection);
  // Istio sends unhealthy endpoints by default (PILOT_AUTO_SEND_UNHEALTHY_ENDPOINTS), so Envoy's panic
  // mode, which would route to them, is off unless outlier detection set a threshold.
  common.healthyPanicThreshold ??= { value: 0 };
  applyLocalityWeightedConfig(draft, common, localityLbSetting(mesh, policy?.loadBalancer?.localityLbSetting));
  applyLoadBalancer(draft, policy?.loadBalancer, input.redisFilter === true && port.protocol === "Redis");
  return { draft, http, common };
}

/** EDS over ADS for an EDS cluster, the HTTP protocol options and the common LB config, once TLS is known. */
export function finishServiceCluster(memos: Memos, { draft, http, common }: ServiceClusterDraft): void {
  if (discoveryType(draft) === DiscoveryType.EDS) {
    draft.edsClusterConfig = edsClusterConfigMessage(draft.name, EDS_OVER_ADS);
  }
  const protocolOptions = httpProtocolOptionsAny(memos, http);
  if (protocolOptions) draft.typedExtensionProtocolOptions = protocolOptions;
  // Most clusters set only panic mode off: they share one message.
  const panicOffOnly = Object.keys(common).length === 1 && common.healthyPanicThreshold?.value === 0;
  draft.commonLbConfig = panicOffOnly
    ? PANIC_OFF_COMMON_LB_CONFIG
    : create(cluster.Cluster_CommonLbConfigSchema, common);
}

/**
 * Istio's BestEffortInferServiceMTLSMode: passthrough traffic (a headless service, or PASSTHROUGH load
 * balancing in the rule's top-level or the subset's own policy) gets mTLS only when there are endpoints
 * and none of them has mTLS disabled; otherwise the caller's PeerAuthentication mode, PERMISSIVE by default.
 */
function inferredMtlsMode(input: OutboundClusterInput, subset: string): ServiceMtlsMode {
  const spec = input.destinationRule?.spec;
  const policy = subset === "" ? spec?.trafficPolicy : spec?.subsets?.find((s) => s.name === subset)?.trafficPolicy;
  if (input.service.meshExternal) return "UNKNOWN";
  if (input.service.resolution === "Passthrough" || policy?.loadBalancer?.simple === "PASSTHROUGH") {
    if (input.endpoints.length === 0 || input.endpoints.some((ep) => ep.tlsMode === "disabled")) return "DISABLE";
  }
  return input.serviceMtlsMode ?? "PERMISSIVE";
}

/** Istio's SupportsDrainingEndpoints: services labelled for persistent sessions (cookie or header). */
export function supportsDrainingEndpoints(service: Service): boolean {
  return (
    (service.labels[PERSISTENT_SESSION_LABEL] ?? "") !== "" ||
    (service.labels[PERSISTENT_SESSION_HEADER_LABEL] ?? "") !== ""
  );
}

interface KeptIdentities {
  service: Service;
  mesh: MeshConfig;
  identities: string[];
}

// By endpoint list: the registry's, one object across pushes until the port's endpoints change.
const IDENTITIES_BY_ENDPOINTS = weakTable<readonly ServiceEndpoint[], KeptIdentities>("cluster/identities");

/** The identities that may serve the service: its own and its endpoints', under every trust domain alias. */
function serviceIdentities(memos: Memos, input: OutboundClusterInput): string[] {
  const { service, endpoints, mesh } = input;
  if (service.serviceAccounts.length === 0 && endpoints.every((ep) => ep.identity === "")) return [];
  const identitiesByEndpoints = memos.weak(IDENTITIES_BY_ENDPOINTS);
  const kept = identitiesByEndpoints.get(endpoints);
  if (kept?.service === service && kept.mesh === mesh) return kept.identities;
  const ids = new Set(service.serviceAccounts);
  for (const ep of endpoints) if (ep.identity !== "") ids.add(ep.identity);
  const identities = expandTrustDomains([...ids], mesh);
  identitiesByEndpoints.set(endpoints, { service, mesh, identities });
  return identities;
}
