// The clusters of a waypoint proxy (Istio's cluster_waypoint.go): the internal clusters that hand
// traffic between its listeners (`main_internal` to the HBONE-terminated listener, `encap` to
// `connect_originate`), `connect_originate` itself (HBONE to the destination's or its waypoint's
// port 15008), the double-HBONE pair (`inner_connect_originate` and `outer_connect_originate`), and
// per service port the `inbound-vip|<port>|<http|tcp>[/<subset>]|<host>` clusters balancing over the
// service's endpoints, each reached through `connect_originate`.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Duration } from "@bufbuild/protobuf/wkt";
import {
  cluster,
  core,
  endpoint,
  envoyMetadata,
  httpProtocolOptions,
  internalUpstream,
  packAny,
  tls,
} from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { ServiceProtocol } from "../../registry/index.ts";
import { type Memos, NO_MEMOS } from "../../util/index.ts";
import { isDynamicForwardProxy } from "../dfp.ts";
import { durationFromSeconds, toDuration } from "../duration.ts";
import { CONNECT_ORIGINATE, ORIGINAL_DST_METADATA_KEY } from "../endpoint/index.ts";
import { defaultThresholds, meshConnectTimeout } from "./connectionpool.ts";
import { discoveryType } from "./loadbalancer.ts";
import { clusterMessage, metadataMessage, transportSocketMessage } from "./message.ts";
import { altStatName, istioClusterMetadata } from "./metadata.ts";
import { buildServiceCluster, finishServiceCluster, outboundDiscoveryType } from "./outbound.ts";
import { effectiveTrafficPolicy } from "./policy.ts";
import { HTTP_PROTOCOL_OPTIONS_KEY, isHttpProtocol } from "./protocol.ts";
import { applyUpstreamProxyProtocol } from "./proxyprotocol.ts";
import { passthroughHttpProtocolOptions } from "./special.ts";
import {
  agentSdsSecret,
  buildUpstreamTls,
  INNER_RAW_BUFFER_SOCKET,
  SDS_DEFAULT_RESOURCE,
  SDS_ROOT_RESOURCE,
} from "./tls.ts";
import type { OutboundClusterInput } from "./types.ts";

export const MAIN_INTERNAL = "main_internal";
export const ENCAP_CLUSTER = "encap";
export const INNER_CONNECT_ORIGINATE = "inner_connect_originate";
export const OUTER_CONNECT_ORIGINATE = "outer_connect_originate";
/** Where HBONE is received: every ambient workload and waypoint listens for CONNECT there. */
export const HBONE_PORT = 15008;

/** HBONE connections idle up to an hour unless the mesh says otherwise (hboneIdleTimeout). */
const HBONE_IDLE_TIMEOUT_SECONDS = 3600;
/** How often an ORIGINAL_DST cluster drops hosts no longer used. */
const CLEANUP_INTERVAL_SECONDS = 60;

/** What the waypoint's own clusters read: the mesh (trust domains, timeouts) and the waypoint's namespace. */
export interface WaypointClustersInput {
  mesh: MeshConfig;
  /** The waypoint's namespace: `connect_originate` accepts only its service accounts' peers as waypoints. */
  namespace: string;
  memos: Memos;
}

/** The clusters a waypoint has besides its services': in Istio's order, before and after the inbound VIP clusters. */
export interface WaypointClusters {
  beforeServices: cluster.Cluster[];
  afterServices: cluster.Cluster[];
}

/** main_internal and encap, then connect_originate and the double-HBONE pair. */
export function buildWaypointClusters(input: WaypointClustersInput): WaypointClusters {
  const { mesh, memos } = input;
  // Istio checks the peer is a workload of the waypoint's own namespace (its SAN prefix), besides the trust domains.
  const namespaceSan = `spiffe://${mesh.trustDomain ?? "cluster.local"}/ns/${input.namespace}/sa/`;
  return {
    beforeServices: [
      internalListenerCluster(memos, MAIN_INTERNAL, MAIN_INTERNAL),
      internalListenerCluster(memos, ENCAP_CLUSTER, CONNECT_ORIGINATE),
    ],
    afterServices: [
      connectOriginateCluster(memos, mesh, [namespaceSan]),
      innerConnectOriginateCluster(memos, mesh),
      outerConnectOriginateCluster(memos, mesh),
    ],
  };
}

/** A STATIC cluster whose one endpoint is the internal listener `listener`, speaking the downstream's HTTP version. */
function internalListenerCluster(memos: Memos, name: string, listener: string): cluster.Cluster {
  const c = clusterMessage(name);
  c.clusterDiscoveryType = { case: "type", value: cluster.Cluster_DiscoveryType.STATIC };
  c.circuitBreakers = defaultCircuitBreakers();
  c.loadAssignment = internalLoadAssignment(name, listener);
  c.transportSocket = internalUpstreamSocket("internal_upstream", INNER_RAW_BUFFER_SOCKET);
  c.typedExtensionProtocolOptions = passthroughHttpProtocolOptions(memos);
  c.altStatName = altStatName(memos, name, undefined);
  return c;
}

/** HBONE to the original destination (or the waypoint its metadata names), at port 15008. */
function connectOriginateCluster(memos: Memos, mesh: MeshConfig, extraSanPrefixes: readonly string[]): cluster.Cluster {
  const c = originalDstTunnelCluster(memos, mesh, CONNECT_ORIGINATE, false);
  c.lbConfig = {
    case: "originalDstLbConfig",
    value: create(cluster.Cluster_OriginalDstLbConfigSchema, {
      upstreamPortOverride: HBONE_PORT,
      metadataKey: create(envoyMetadata.MetadataKeySchema, {
        key: ORIGINAL_DST_METADATA_KEY,
        path: [{ segment: { case: "key", value: "waypoint" } }],
      }),
    }),
  };
  c.transportSocket = connectTlsSocket(mesh, extraSanPrefixes);
  return c;
}

/** The outer tunnel of double HBONE: like connect_originate, one request per connection, no waypoint override. */
function outerConnectOriginateCluster(memos: Memos, mesh: MeshConfig): cluster.Cluster {
  const c = originalDstTunnelCluster(memos, mesh, OUTER_CONNECT_ORIGINATE, true);
  c.lbConfig = {
    case: "originalDstLbConfig",
    value: create(cluster.Cluster_OriginalDstLbConfigSchema, { upstreamPortOverride: HBONE_PORT }),
  };
  c.transportSocket = connectTlsSocket(mesh, []);
  return c;
}

/** The inner tunnel of double HBONE: CONNECT over TLS into the outer_connect_originate listener. */
function innerConnectOriginateCluster(memos: Memos, mesh: MeshConfig): cluster.Cluster {
  const c = clusterMessage(INNER_CONNECT_ORIGINATE);
  c.clusterDiscoveryType = { case: "type", value: cluster.Cluster_DiscoveryType.STATIC };
  c.circuitBreakers = defaultCircuitBreakers();
  c.loadAssignment = internalLoadAssignment(INNER_CONNECT_ORIGINATE, OUTER_CONNECT_ORIGINATE);
  c.typedExtensionProtocolOptions = connectProtocolOptions(mesh, true);
  c.transportSocket = internalUpstreamSocket("internal_upstream_with_tls", connectTlsSocket(mesh, []));
  c.altStatName = altStatName(memos, INNER_CONNECT_ORIGINATE, undefined);
  return c;
}

/** An ORIGINAL_DST cluster speaking HTTP/2 CONNECT (one request per connection for the double-HBONE outer tunnel). */
function originalDstTunnelCluster(memos: Memos, mesh: MeshConfig, name: string, noPooling: boolean): cluster.Cluster {
  const c = clusterMessage(name);
  c.clusterDiscoveryType = { case: "type", value: cluster.Cluster_DiscoveryType.ORIGINAL_DST };
  c.lbPolicy = cluster.Cluster_LbPolicy.CLUSTER_PROVIDED;
  c.connectTimeout = meshConnectTimeout(memos, mesh);
  c.cleanupInterval = durationFromSeconds(CLEANUP_INTERVAL_SECONDS);
  c.circuitBreakers = defaultCircuitBreakers();
  c.typedExtensionProtocolOptions = connectProtocolOptions(mesh, noPooling);
  c.altStatName = altStatName(memos, name, undefined);
  return c;
}

/** HTTP/2 with CONNECT allowed, idling up to the mesh's HBONE idle timeout. */
function connectProtocolOptions(
  mesh: MeshConfig,
  noPooling: boolean,
): cluster.Cluster["typedExtensionProtocolOptions"] {
  const idleTimeout: Duration = toDuration(mesh.hboneIdleTimeout) ?? durationFromSeconds(HBONE_IDLE_TIMEOUT_SECONDS);
  const options = create(httpProtocolOptions.HttpProtocolOptionsSchema, {
    commonHttpProtocolOptions: { idleTimeout, maxRequestsPerConnection: noPooling ? 1 : undefined },
    upstreamProtocolOptions: {
      case: "explicitHttpConfig",
      value: create(httpProtocolOptions.HttpProtocolOptions_ExplicitHttpConfigSchema, {
        protocolConfig: {
          case: "http2ProtocolOptions",
          value: create(core.Http2ProtocolOptionsSchema, { allowConnect: true }),
        },
      }),
    },
  });
  return { [HTTP_PROTOCOL_OPTIONS_KEY]: packAny(httpProtocolOptions.HttpProtocolOptionsSchema, options) };
}

/** HBONE's TLS towards `connect_originate`'s peers (and `extraSanPrefixes`). */
function connectTlsSocket(mesh: MeshConfig, extraSanPrefixes: readonly string[]): core.TransportSocket {
  const context = create(tls.UpstreamTlsContextSchema, {
    commonTlsContext: connectTlsContext(mesh, extraSanPrefixes),
  });
  return transportSocketMessage("tls", packAny(tls.UpstreamTlsContextSchema, context));
}

/**
 * The TLS of HBONE, both ways (Istio's buildCommonConnectTLSContext): TLS 1.3 only, ALPN h2, the
 * workload certificate, peers of the mesh's trust domains (and `extraSanPrefixes`) by URI SAN prefix.
 */
export function connectTlsContext(
  mesh: MeshConfig,
  extraSanPrefixes: readonly string[] = [],
): MessageInitShape<typeof tls.CommonTlsContextSchema> {
  const sanPrefixes = [...trustDomainsForValidation(mesh).map((td) => `spiffe://${td}/`), ...extraSanPrefixes];
  return {
    tlsParams: {
      tlsMinimumProtocolVersion: tls.TlsParameters_TlsProtocol.TLSv1_3,
      tlsMaximumProtocolVersion: tls.TlsParameters_TlsProtocol.TLSv1_3,
    },
    alpnProtocols: ["h2"],
    tlsCertificateSdsSecretConfigs: [agentSdsSecret(SDS_DEFAULT_RESOURCE)],
    validationContextType: {
      case: "combinedValidationContext",
      value: {
        defaultValidationContext: {
          matchTypedSubjectAltNames: sanPrefixes.map((prefix) => ({
            sanType: tls.SubjectAltNameMatcher_SanType.URI,
            matcher: { matchPattern: { case: "prefix" as const, value: prefix } },
          })),
        },
        validationContextSdsSecretConfig: agentSdsSecret(SDS_ROOT_RESOURCE),
      },
    },
  };
}

/** The trust domains a peer may be of (Istio's TrustDomainsForValidation): the mesh's, its aliases, its CAs', each once. */
function trustDomainsForValidation(mesh: MeshConfig): string[] {
  const domains = [
    mesh.trustDomain ?? "cluster.local",
    ...(mesh.trustDomainAliases ?? []),
    ...(mesh.caCertificates ?? []).flatMap((ca) => ca.trustDomains ?? []),
  ];
  return [...new Set(domains.filter((td) => td !== ""))];
}

/**
 * A transport socket into an internal listener around `inner`; `passthroughMetadata` hands the
 * endpoint's original destination and Istio metadata on to it (Istio's WaypointInternalUpstreamTransportSocket).
 */
export function internalUpstreamSocket(
  name: string,
  inner: core.TransportSocket,
  passthroughMetadata = false,
): core.TransportSocket {
  const hostMetadata = (key: string) => ({ kind: { kind: { case: "host" as const, value: {} } }, name: key });
  const config = create(internalUpstream.InternalUpstreamTransportSchema, {
    passthroughMetadata: passthroughMetadata ? [hostMetadata(ORIGINAL_DST_METADATA_KEY), hostMetadata("istio")] : [],
    transportSocket: inner,
  });
  return transportSocketMessage(name, packAny(internalUpstream.InternalUpstreamTransportSchema, config));
}

function internalLoadAssignment(clusterName: string, listener: string): endpoint.ClusterLoadAssignment {
  return create(endpoint.ClusterLoadAssignmentSchema, {
    clusterName,
    endpoints: [
      {
        lbEndpoints: [
          {
            hostIdentifier: {
              case: "endpoint",
              value: {
                address: {
                  address: { case: "envoyInternalAddress", value: internalAddress(listener) },
                },
              },
            },
          },
        ],
      },
    ],
  });
}

/** The address of the internal listener `listener`; `endpointId` tells apart endpoints sharing it. */
function internalAddress(listener: string, endpointId = ""): MessageInitShape<typeof core.EnvoyInternalAddressSchema> {
  return { addressNameSpecifier: { case: "serverListenerName", value: listener }, endpointId };
}

function defaultCircuitBreakers(): cluster.CircuitBreakers {
  return create(cluster.CircuitBreakersSchema, { thresholds: [defaultThresholds()] });
}

/** `inbound-vip|<port>|<subset>|<host>`: a waypoint's cluster of a service port (`subset` is `http`, `tcp/v1`, ...). */
function inboundVipClusterName(port: number, subset: string, hostname: string): string {
  return `inbound-vip|${port}|${subset}|${hostname}`;
}

/** Istio's IsTCP: the protocols a waypoint serves with a TCP chain. */
const TCP_PROTOCOLS: ReadonlySet<ServiceProtocol> = new Set(["TCP", "HTTPS", "TLS", "Mongo", "Redis", "MySQL"]);

/**
 * A waypoint's clusters of one service port (Istio's buildWaypointInboundVIP): `tcp` for a TCP port,
 * `http` for an HTTP one, both when the protocol is unknown, and the same again per DestinationRule
 * subset (`http/<subset>`). None for UDP. (DYNAMIC_DNS entries, dynamic forward proxy clusters in
 * Istio, are not built yet.)
 */
export function buildInboundVipClusters(input: OutboundClusterInput): cluster.Cluster[] {
  const { service, port } = input;
  const type = outboundDiscoveryType(service, input.proxy);
  if (port.protocol === "UDP" || type === undefined || isDynamicForwardProxy(service)) return [];
  const kinds: string[] = [];
  const unknown = port.protocol === "UnsupportedProtocol";
  if (unknown || TCP_PROTOCOLS.has(port.protocol)) kinds.push("tcp");
  if (unknown || isHttpProtocol(port.protocol)) kinds.push("http");
  const clusters: (cluster.Cluster | undefined)[] = kinds.map((kind) =>
    inboundVipCluster(input, type, kind, undefined),
  );
  for (const subset of input.destinationRule?.spec.subsets ?? []) {
    clusters.push(...kinds.map((kind) => inboundVipCluster(input, type, kind, subset)));
  }
  return clusters.filter((c): c is cluster.Cluster => c !== undefined);
}

/**
 * One inbound VIP cluster: the service cluster with its DestinationRule's policy, reached through
 * the internal listener its endpoints name (their original destination and Istio metadata handed on),
 * with TLS only for SIMPLE and MUTUAL (Istio mTLS is HBONE's) and PROXY protocol when asked for.
 */
function inboundVipCluster(
  input: OutboundClusterInput,
  type: cluster.Cluster_DiscoveryType,
  kind: string,
  subset: { name: string; labels?: Record<string, string> } | undefined,
): cluster.Cluster | undefined {
  const memos = input.memos ?? NO_MEMOS;
  const { service, port, mesh } = input;
  const rule = input.destinationRule;
  const subsetName = subset ? `${kind}/${subset.name}` : kind;
  const name = inboundVipClusterName(port.port, subsetName, service.hostname);
  const policy = effectiveTrafficPolicy(rule?.spec, port.port, subset?.name);
  const statName = altStatName(memos, name, undefined);
  const subsetLabels = subset ? (subset.labels ?? {}) : undefined;
  const built = buildServiceCluster(memos, input, type, name, statName, subsetLabels, policy);
  if (!built) return undefined;
  const { draft, http } = built;
  if (discoveryType(draft) === cluster.Cluster_DiscoveryType.ORIGINAL_DST) {
    draft.lbPolicy = cluster.Cluster_LbPolicy.CLUSTER_PROVIDED;
  }
  const mode = policy?.tls?.mode;
  if (mode === "SIMPLE" || mode === "MUTUAL") {
    const userTls = buildUpstreamTls({
      clusterName: name,
      tls: policy?.tls,
      serviceAccounts: [],
      istioSni: "",
      autoMtls: false,
      external: service.registry === "External",
      http2: http.upstream === "http2",
      originalDst: false,
      credentialNameAllowed: true,
      mesh,
    });
    if (userTls.transportSocket) draft.transportSocket = userTls.transportSocket;
    if (userTls.autoSni) http.autoSni = true;
    if (userTls.autoSanValidation) http.autoSanValidation = true;
  }
  applyUpstreamProxyProtocol(draft, policy?.proxyProtocol);
  draft.transportSocket = internalUpstreamSocket(
    "internal_upstream",
    draft.transportSocket ?? INNER_RAW_BUFFER_SOCKET,
    true,
  );
  finishServiceCluster(memos, built);
  const configured = rule && policy ? rule : undefined;
  draft.metadata = metadataMessage(
    istioClusterMetadata({ services: [service], destinationRule: configured, subset: subsetName }),
  );
  return draft;
}
