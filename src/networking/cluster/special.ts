// The clusters every proxy gets besides the services' (Istio's cluster_builder.go
// buildBlackHoleCluster, buildDefaultPassthroughCluster, buildInboundPassthroughCluster).
import { isIP } from "node:net";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { cluster, core, dfpCluster, packAny } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { ProxyNode } from "../../model/index.ts";
import type { Memos } from "../../util/index.ts";
import { allowAnyDnsCache, DFP_CLUSTER_TYPE } from "../dfp.ts";
import { durationFromSeconds } from "../duration.ts";
import { applyConnectionPool, meshConnectTimeout } from "./connectionpool.ts";
import { clusterMessage } from "./message.ts";
import { TCP_CLUSTER_METADATA_EXCHANGE } from "./metadataexchange.ts";
import {
  ALLOW_ANY_DYNAMIC_DNS_CLUSTER,
  BLACKHOLE_CLUSTER,
  INBOUND_PASSTHROUGH_CLUSTER,
  PASSTHROUGH_CLUSTER,
} from "./names.ts";
import { httpProtocolOptionsAny } from "./protocol.ts";

/** Passthrough connections may idle up to 5 minutes before Envoy closes them. */
const PASSTHROUGH_IDLE_TIMEOUT_SECONDS = 300;

/** A STATIC cluster with no endpoints: where traffic to nowhere goes. */
export function buildBlackHoleCluster(memos: Memos, mesh: MeshConfig): cluster.Cluster {
  const blackHole = clusterMessage(BLACKHOLE_CLUSTER);
  blackHole.clusterDiscoveryType = { case: "type", value: cluster.Cluster_DiscoveryType.STATIC };
  blackHole.connectTimeout = meshConnectTimeout(memos, mesh);
  blackHole.altStatName = `${BLACKHOLE_CLUSTER};`;
  return blackHole;
}

/** ORIGINAL_DST to wherever the caller was going (ALLOW_ANY), speaking the downstream's HTTP version. */
export function buildPassthroughCluster(memos: Memos, mesh: MeshConfig): cluster.Cluster {
  const passthrough = passthroughCluster(memos, PASSTHROUGH_CLUSTER, mesh);
  passthrough.filters = [TCP_CLUSTER_METADATA_EXCHANGE];
  return passthrough;
}

/**
 * The inbound counterpart: bound to 127.0.0.6 (::6 on IPv6-only proxies; both on dual stack) so that
 * iptables does not capture the sidecar's own connection to the application. Keeps the outbound stat name.
 */
export function buildInboundPassthroughCluster(memos: Memos, mesh: MeshConfig, proxy: ProxyNode): cluster.Cluster {
  const inbound = passthroughCluster(memos, INBOUND_PASSTHROUGH_CLUSTER, mesh);
  inbound.upstreamBindConfig = create(core.BindConfigSchema, passthroughBindConfig(proxy, true));
  return inbound;
}

/**
 * AllowAnyDynamicDNSCluster (MeshConfig outboundTrafficPolicy ALLOW_ANY_DYNAMIC_DNS, Istio's
 * buildAllowAnyDFPCluster): the passthrough cluster's settings, but connecting to the name the HTTP
 * dynamic forward proxy filter resolved into the shared cache. Plaintext: auto SNI and SAN validation
 * are off, so insecure options must be allowed. (Istio's optional TLS origination from the mesh's
 * outboundTrafficPolicy.tls is not built.)
 */
export function buildAllowAnyDynamicDnsCluster(memos: Memos, mesh: MeshConfig, proxy: ProxyNode): cluster.Cluster {
  const dfp = passthroughCluster(memos, ALLOW_ANY_DYNAMIC_DNS_CLUSTER, mesh);
  dfp.altStatName = `${ALLOW_ANY_DYNAMIC_DNS_CLUSTER};`;
  dfp.filters = [TCP_CLUSTER_METADATA_EXCHANGE];
  dfp.clusterDiscoveryType = {
    case: "clusterType",
    value: create(cluster.Cluster_CustomClusterTypeSchema, {
      name: DFP_CLUSTER_TYPE,
      typedConfig: packAny(
        dfpCluster.ClusterConfigSchema,
        create(dfpCluster.ClusterConfigSchema, {
          clusterImplementationSpecifier: { case: "dnsCacheConfig", value: allowAnyDnsCache(proxy) },
          allowInsecureClusterOptions: true,
        }),
      ),
    }),
  };
  return dfp;
}

/** The settings of PassthroughCluster, under `name` (its stat name stays PassthroughCluster's). */
function passthroughCluster(memos: Memos, name: string, mesh: MeshConfig): cluster.Cluster {
  const passthrough = clusterMessage(name);
  passthrough.clusterDiscoveryType = { case: "type", value: cluster.Cluster_DiscoveryType.ORIGINAL_DST };
  passthrough.lbPolicy = cluster.Cluster_LbPolicy.CLUSTER_PROVIDED;
  passthrough.typedExtensionProtocolOptions = passthroughHttpProtocolOptions(memos);
  passthrough.altStatName = `${PASSTHROUGH_CLUSTER};`;
  // The mesh connect timeout, default circuit breakers and TCP keepalive, as an empty connection pool gives.
  applyConnectionPool(memos, passthrough, {}, undefined, mesh);
  return passthrough;
}

/**
 * Istio's passthroughHttpProtocolOptions: the downstream's HTTP version, idling up to 5 minutes; also
 * what a waypoint's clusters to its internal listeners speak.
 */
export function passthroughHttpProtocolOptions(memos: Memos): cluster.Cluster["typedExtensionProtocolOptions"] {
  return (
    httpProtocolOptionsAny(memos, {
      upstream: "downstream",
      idleTimeout: durationFromSeconds(PASSTHROUGH_IDLE_TIMEOUT_SECONDS),
    }) ?? {}
  );
}

/** The "magic" source addresses of the inbound passthrough (Istio's passThroughBindIPs). */
export function passthroughBindIps(proxy: ProxyNode): string[] {
  const v4 = proxy.ipAddresses.some((ip) => isIP(ip) === 4);
  const v6 = proxy.ipAddresses.some((ip) => isIP(ip) === 6);
  if (v6 && !v4) return ["::6"];
  if (v4 && v6) return ["127.0.0.6", "::6"];
  return ["127.0.0.6"];
}

/** The bind config from the magic addresses; `dualStack` adds the second family as an extra source address. */
export function passthroughBindConfig(
  proxy: ProxyNode,
  dualStack: boolean,
): MessageInitShape<typeof core.BindConfigSchema> {
  const [first, ...extra] = passthroughBindIps(proxy);
  return {
    sourceAddress: socketAddress(first, 0),
    extraSourceAddresses: dualStack ? extra.map((address) => ({ address: socketAddress(address, 0) })) : [],
  };
}

function socketAddress(address: string, port: number): MessageInitShape<typeof core.SocketAddressSchema> {
  return { address, portSpecifier: { case: "portValue", value: port } };
}
