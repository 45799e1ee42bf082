// DestinationRule connectionPool → circuit breakers, connect timeout, TCP keepalive and the common HTTP
// protocol options (Istio's applyConnectionPool, applyTCPKeepalive, applyH2Upgrade in
// cluster_traffic_policy.go). Every cluster gets the "unlimited" thresholds Istio sets by default.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Duration } from "@bufbuild/protobuf/wkt";
import { cluster, preEncoded } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type {
  ConnectionPool,
  ConnectionPoolTcpTcpKeepalive,
  DestinationRuleTrafficPolicyRetryBudget,
} from "../../config/types/index.ts";
import type { ServicePort } from "../../registry/index.ts";
import { type Memos, weakTable } from "../../util/index.ts";
import { durationFromSeconds, toDuration } from "../duration.ts";
import { type HttpOptionsDraft, isHttpProtocol } from "./protocol.ts";

type ThresholdsInit = MessageInitShape<typeof cluster.CircuitBreakers_ThresholdsSchema>;

const UNLIMITED = 4294967295;

/** Istio's default thresholds; track_remaining stays off (DISABLE_TRACK_REMAINING_CB_METRICS defaults on). */
export function defaultThresholds(): ThresholdsInit {
  return {
    maxConnections: UNLIMITED,
    maxPendingRequests: UNLIMITED,
    maxRequests: UNLIMITED,
    maxRetries: UNLIMITED,
  };
}

/** What a cluster without a connection pool or retry budget gets: the same for every such cluster. */
interface MeshPoolSettings {
  circuitBreakers: cluster.CircuitBreakers;
  connectTimeout: Duration;
  upstreamConnectionOptions?: cluster.UpstreamConnectionOptions;
}

// Built once per mesh config and shared by its clusters (messages are never changed once built).
const MESH_POOL_SETTINGS = weakTable<MeshConfig, MeshPoolSettings>("cluster/meshPoolSettings");

function meshDefaults(memos: Memos, mesh: MeshConfig): MeshPoolSettings {
  const meshPoolSettings = memos.weak(MESH_POOL_SETTINGS);
  let settings = meshPoolSettings.get(mesh);
  if (!settings) {
    const keepalive = tcpKeepalive(mesh, undefined);
    settings = {
      circuitBreakers: preEncoded(
        cluster.CircuitBreakersSchema,
        create(cluster.CircuitBreakersSchema, { thresholds: [defaultThresholds()] }),
      ),
      connectTimeout: toDuration(mesh.connectTimeout) ?? durationFromSeconds(10),
      upstreamConnectionOptions:
        keepalive && create(cluster.UpstreamConnectionOptionsSchema, { tcpKeepalive: keepalive }),
    };
    meshPoolSettings.set(mesh, settings);
  }
  return settings;
}

/** The mesh's connect timeout (10 s when unset), one message per mesh config. */
export function meshConnectTimeout(memos: Memos, mesh: MeshConfig): Duration {
  return meshDefaults(memos, mesh).connectTimeout;
}

/** Sets connect timeout, circuit breakers and TCP keepalive on the draft, and the HTTP options on `http`. */
export function applyConnectionPool(
  memos: Memos,
  draft: cluster.Cluster,
  http: HttpOptionsDraft,
  pool: ConnectionPool | undefined,
  mesh: MeshConfig,
  retryBudget?: DestinationRuleTrafficPolicyRetryBudget,
): void {
  if (!pool && !retryBudget) {
    const settings = meshDefaults(memos, mesh);
    draft.circuitBreakers = settings.circuitBreakers;
    draft.connectTimeout = settings.connectTimeout;
    if (settings.upstreamConnectionOptions) draft.upstreamConnectionOptions = settings.upstreamConnectionOptions;
    return;
  }
  const thresholds = defaultThresholds();
  if (retryBudget) {
    // Istio's defaults: a budget of 0.2 (Envoy reads it as a percentage) and at least 3 concurrent retries.
    thresholds.retryBudget = {
      budgetPercent: { value: retryBudget.percent ?? 0.2 },
      minRetryConcurrency: retryBudget.minRetryConcurrency || 3,
    };
  }
  const h = pool?.http;
  const tcp = pool?.tcp;
  if (h?.http2MaxRequests && h.http2MaxRequests > 0) thresholds.maxRequests = h.http2MaxRequests;
  if (h?.http1MaxPendingRequests && h.http1MaxPendingRequests > 0) {
    thresholds.maxPendingRequests = h.http1MaxPendingRequests;
  }
  if (h?.maxRetries && h.maxRetries > 0) thresholds.maxRetries = h.maxRetries;
  if (tcp?.maxConnections && tcp.maxConnections > 0) thresholds.maxConnections = tcp.maxConnections;
  draft.circuitBreakers = create(cluster.CircuitBreakersSchema, { thresholds: [thresholds] });

  draft.connectTimeout = toDuration(tcp?.connectTimeout) ?? toDuration(mesh.connectTimeout) ?? durationFromSeconds(10);
  const keepalive = tcpKeepalive(mesh, tcp?.tcpKeepalive);
  if (keepalive)
    draft.upstreamConnectionOptions = create(cluster.UpstreamConnectionOptionsSchema, { tcpKeepalive: keepalive });

  const idleTimeout = toDuration(h?.idleTimeout) ?? toDuration(tcp?.idleTimeout);
  if (idleTimeout) http.idleTimeout = idleTimeout;
  const maxConnectionDuration = toDuration(tcp?.maxConnectionDuration);
  if (maxConnectionDuration) http.maxConnectionDuration = maxConnectionDuration;
  if (h?.maxRequestsPerConnection && h.maxRequestsPerConnection > 0) {
    http.maxRequestsPerConnection = h.maxRequestsPerConnection;
  }
  // Istio sets max concurrent streams only on a cluster that is already explicit HTTP/2 at this point.
  if (h?.maxConcurrentStreams && h.maxConcurrentStreams > 0 && http.upstream === "http2") {
    http.maxConcurrentStreams = h.maxConcurrentStreams;
  }
  if (h?.useClientProtocol) http.upstream = "downstream";
}

/**
 * Istio's shouldH2Upgrade: never with useClientProtocol; the DestinationRule's h2UpgradePolicy wins
 * (UPGRADE even on a non-HTTP port); otherwise only HTTP ports follow the mesh h2UpgradePolicy.
 */
export function shouldUpgradeToH2(port: ServicePort, pool: ConnectionPool | undefined, mesh: MeshConfig): boolean {
  const override = pool?.http?.h2UpgradePolicy;
  // A cluster that follows the client's protocol is never upgraded.
  if (pool?.http?.useClientProtocol) return false;
  if (override === "UPGRADE") return true;
  if (override === "DO_NOT_UPGRADE") return false;
  if (!isHttpProtocol(port.protocol)) return false;
  return mesh.h2UpgradePolicy === "UPGRADE";
}

/** The DestinationRule's TCP keepalive over the mesh's (field by field), in whole seconds as Envoy wants. */
function tcpKeepalive(
  mesh: MeshConfig,
  rule: ConnectionPoolTcpTcpKeepalive | undefined,
): MessageInitShape<typeof cluster.UpstreamConnectionOptionsSchema>["tcpKeepalive"] {
  const meshKeepalive = mesh.tcpKeepalive as ConnectionPoolTcpTcpKeepalive | undefined;
  if (!meshKeepalive && !rule) return undefined;
  const probes = rule?.probes ?? meshKeepalive?.probes;
  const time = seconds(rule?.time ?? meshKeepalive?.time);
  const interval = seconds(rule?.interval ?? meshKeepalive?.interval);
  return {
    keepaliveProbes: probes || undefined,
    keepaliveTime: time,
    keepaliveInterval: interval,
  };
}

function seconds(text: string | undefined): number | undefined {
  const d = toDuration(text);
  return d === undefined ? undefined : Number(d.seconds);
}
