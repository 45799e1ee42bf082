// Proxyless gRPC clusters (Istio's grpcgen cds.go): only the names the client asks for, each a plain
// EDS cluster over ADS, with the part of the DestinationRule gRPC understands: LEAST_REQUEST,
// consistent hash (ring hash; the hash key is on the route), and http2MaxRequests as the one circuit
// breaker. Everything else (outlier detection, connect timeouts, other pool limits) is left out, as
// Istio leaves it out; and client mTLS for an explicit ISTIO_MUTUAL (see tls.ts).
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { cluster, packAny, tls } from "../../api/index.ts";
import type { DestinationRuleSpec, DestinationRuleTrafficPolicy } from "../../config/types/index.ts";
import type { Service } from "../../registry/index.ts";
import { type Memos, NO_MEMOS } from "../../util/index.ts";
import { outboundClusterName, parseClusterName } from "../cluster/index.ts";
import { applyConsistentHash } from "../cluster/loadbalancer.ts";
import { effectiveTrafficPolicy } from "../cluster/policy.ts";
import { TLS_TRANSPORT_SOCKET } from "../cluster/tls.ts";
import { grpcUpstreamTlsContext } from "./tls.ts";

type ClusterInit = MessageInitShape<typeof cluster.ClusterSchema>;

/** The clusters asked for that share one service port: its default cluster name and the names requested. */
export interface RequestedClusterGroup {
  hostname: string;
  port: number;
  /** Requested names of this service port: the default cluster and/or subset clusters. */
  names: Set<string>;
}

/** Groups requested names by their default cluster (Istio's newClusterFilter); other names are dropped. */
export function groupClusterNames(memos: Memos, names: Iterable<string>): RequestedClusterGroup[] {
  const groups = new Map<string, RequestedClusterGroup>();
  for (const name of names) {
    const parsed = parseClusterName(name);
    if (parsed?.direction !== "outbound" || parsed.hostname === "" || parsed.port === 0) continue;
    const key = outboundClusterName(memos, parsed.port, "", parsed.hostname);
    const group = groups.get(key) ?? { hostname: parsed.hostname, port: parsed.port, names: new Set<string>() };
    group.names.add(name);
    groups.set(key, group);
  }
  return [...groups.values()];
}

export interface GrpcClusterInput {
  group: RequestedClusterGroup;
  /** The service of the hostname the proxy sees; without it only the default cluster is sent, bare. */
  service?: Service;
  destinationRule?: DestinationRuleSpec;
  /** The identities that may serve the service (with trust domain aliases): the SANs ISTIO_MUTUAL checks. */
  serviceAccounts?: readonly string[];
  /** Where the builders keep what they memoise (the xDS cache's tables); without it nothing is kept. */
  memos?: Memos;
}

function edsCluster(name: string): ClusterInit {
  return {
    name,
    altStatName: `${name};`,
    clusterDiscoveryType: { case: "type", value: cluster.Cluster_DiscoveryType.EDS },
    edsClusterConfig: { serviceName: name, edsConfig: { configSourceSpecifier: { case: "ads", value: {} } } },
  };
}

/** The TLS, load balancer and circuit breaker gRPC reads from the merged traffic policy. */
function applyTrafficPolicy(
  draft: ClusterInit,
  policy: DestinationRuleTrafficPolicy | undefined,
  serviceAccounts: readonly string[],
): void {
  // SIMPLE and MUTUAL are not supported for gRPC, as in Istio.
  if (policy?.tls?.mode === "ISTIO_MUTUAL") {
    draft.transportSocket = {
      name: TLS_TRANSPORT_SOCKET,
      configType: {
        case: "typedConfig",
        value: packAny(tls.UpstreamTlsContextSchema, grpcUpstreamTlsContext(serviceAccounts)),
      },
    };
  }
  const simple = policy?.loadBalancer?.simple;
  // ROUND_ROBIN is gRPC's default (lb_policy unset); other simple policies are not sent.
  if (simple === "LEAST_REQUEST" || simple === "LEAST_CONN") draft.lbPolicy = cluster.Cluster_LbPolicy.LEAST_REQUEST;
  applyConsistentHash(draft, policy?.loadBalancer);
  const maxRequests = policy?.connectionPool?.http?.http2MaxRequests;
  if (maxRequests && maxRequests > 0) draft.circuitBreakers = { thresholds: [{ maxRequests }] };
}

/** The default cluster (if asked for) then the asked-for subset clusters, in the rule's subset order. */
export function buildGrpcClusters(input: GrpcClusterInput): cluster.Cluster[] {
  const { group, service, destinationRule } = input;
  const sans = input.serviceAccounts ?? [];
  const memos = input.memos ?? NO_MEMOS;
  const defaultName = outboundClusterName(memos, group.port, "", group.hostname);
  const knownPort = service?.ports.some((p) => p.port === group.port) ?? false;
  const out: ClusterInit[] = [];
  if (group.names.has(defaultName)) {
    const draft = edsCluster(defaultName);
    if (knownPort) applyTrafficPolicy(draft, effectiveTrafficPolicy(destinationRule, group.port), sans);
    out.push(draft);
  }
  if (knownPort) {
    for (const subset of destinationRule?.subsets ?? []) {
      const name = outboundClusterName(memos, group.port, subset.name ?? "", group.hostname);
      if (!group.names.has(name)) continue;
      const draft = edsCluster(name);
      applyTrafficPolicy(draft, effectiveTrafficPolicy(destinationRule, group.port, subset.name ?? ""), sans);
      out.push(draft);
    }
  }
  return out.map((c) => create(cluster.ClusterSchema, c));
}
