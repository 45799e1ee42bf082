// The inbound cluster of one workload port, `inbound|<port>||` (Istio's buildInboundCluster): where the
// sidecar delivers accepted traffic. With the mesh's PASSTHROUGH inbound policy (the default) it goes to
// the original destination, from the 127.0.0.6 bind address so iptables lets it through; with
// LOCALHOST to the target port on loopback; a Sidecar ingress defaultEndpoint names its own address
// and port (a unix socket has none).
import { isIP } from "node:net";
import { create } from "@bufbuild/protobuf";
import { cluster, core, endpoint } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import type { ConnectionPool } from "../../config/types/index.ts";
import type { ProxyNode } from "../../model/index.ts";
import type { Service, ServicePort } from "../../registry/index.ts";
import { type Memos, NO_MEMOS } from "../../util/index.ts";
import { durationFromSeconds } from "../duration.ts";
import { endpointAddress } from "../endpoint/index.ts";
import { applyConnectionPool } from "./connectionpool.ts";
import { clusterMessage, metadataMessage } from "./message.ts";
import { altStatName, istioClusterMetadata } from "./metadata.ts";
import { inboundClusterName } from "./names.ts";
import { EMPTY_COMMON_LB_CONFIG } from "./outbound.ts";
import { effectiveTrafficPolicy } from "./policy.ts";
import { type HttpOptionsDraft, httpProtocolOptionsAny, isHttp2Protocol } from "./protocol.ts";
import { passthroughBindConfig } from "./special.ts";
import type { AppliedDestinationRule } from "./types.ts";

/** Istio keeps original-destination hosts practically forever: the largest interval Envoy takes (shared, never changed). */
const INBOUND_CLEANUP_INTERVAL = durationFromSeconds(9223372035);

export interface InboundClusterInput {
  /** The port the cluster is named by: the service's target port, or a Sidecar ingress listener's port. */
  targetPort: number;
  /** The service port served there: its protocol picks HTTP/2 or the downstream's protocol. */
  port: ServicePort;
  /** Every service of the workload with this port (the cluster's istio.services metadata). */
  services: readonly Service[];
  proxy: ProxyNode;
  mesh: MeshConfig;
  /**
   * The DestinationRule for the service's host as seen from this proxy: its connectionPool (port-level
   * merged) applies on the server side too, and a rule with a traffic policy is named in the metadata.
   */
  destinationRule?: AppliedDestinationRule;
  /** A Sidecar ingress listener's connectionPool, which replaces the DestinationRule's. */
  sidecarConnectionPool?: ConnectionPool;
  /**
   * Where to deliver, from a Sidecar ingress listener. Unset: 127.0.0.1 (::1 on IPv6-only proxies) at
   * the target port under the LOCALHOST inbound policy, the original destination otherwise.
   */
  endpoint?: InboundEndpoint;
  /** Where the builders keep what they memoise (the xDS cache's tables); without it nothing is kept. */
  memos?: Memos;
}

/** A fixed inbound destination: address "" is the original destination; a unix socket's port is 0. */
export interface InboundEndpoint {
  address: string;
  port: number;
}

export function buildInboundCluster(input: InboundClusterInput): cluster.Cluster {
  const { proxy, mesh, port } = input;
  const memos = input.memos ?? NO_MEMOS;
  const name = inboundClusterName(input.targetPort);
  const { address: bind, port: bindPort } = input.endpoint ?? {
    address: defaultInboundBind(mesh, proxy),
    port: input.targetPort,
  };
  const draft = clusterMessage(name);
  draft.altStatName = altStatName(
    memos,
    name,
    mesh.inboundClusterStatName,
    input.services[0] && {
      service: input.services[0],
      subset: "",
      port: port.port,
      portName: port.name,
      targetPort: input.targetPort,
    },
  );
  draft.commonLbConfig = EMPTY_COMMON_LB_CONFIG;
  if (bind === "") {
    draft.clusterDiscoveryType = { case: "type", value: cluster.Cluster_DiscoveryType.ORIGINAL_DST };
    draft.lbPolicy = cluster.Cluster_LbPolicy.CLUSTER_PROVIDED;
    draft.cleanupInterval = INBOUND_CLEANUP_INTERVAL;
  } else {
    draft.clusterDiscoveryType = { case: "type", value: cluster.Cluster_DiscoveryType.STATIC };
    draft.loadAssignment = create(endpoint.ClusterLoadAssignmentSchema, {
      clusterName: name,
      endpoints: [
        {
          lbEndpoints: [{ hostIdentifier: { case: "endpoint", value: { address: endpointAddress(bind, bindPort) } } }],
        },
      ],
    });
  }
  // Connections to the application itself must not be captured again; only loopback is exempt.
  if (bind !== "127.0.0.1" && bind !== "::1") {
    draft.upstreamBindConfig = create(core.BindConfigSchema, passthroughBindConfig(proxy, false));
  }

  const http: HttpOptionsDraft = {};
  if (isHttp2Protocol(port.protocol)) http.upstream = "http2";
  else if (proxy.type === "sidecar" && port.protocol === "UnsupportedProtocol") http.upstream = "downstream";
  const rule = input.destinationRule;
  const policy = effectiveTrafficPolicy(rule?.spec, port.port);
  applyConnectionPool(memos, draft, http, input.sidecarConnectionPool ?? policy?.connectionPool, mesh);
  const protocolOptions = httpProtocolOptionsAny(memos, http);
  if (protocolOptions) draft.typedExtensionProtocolOptions = protocolOptions;
  // One entry per hostname; none when the first service is mesh-external (Istio's addTelemetryMetadata).
  const services = input.services[0]?.meshExternal
    ? []
    : input.services.filter((s, i) => input.services.findIndex((o) => o.hostname === s.hostname) === i);
  const filterMetadata = istioClusterMetadata({
    services,
    destinationRule: rule?.spec.trafficPolicy ? rule : undefined,
  });
  // Nothing to say (no service, no rule): no metadata at all, as Istio leaves it.
  if (Object.keys(filterMetadata.istio).length > 0) draft.metadata = metadataMessage(filterMetadata);
  return draft;
}

function defaultInboundBind(mesh: MeshConfig, proxy: ProxyNode): string {
  if (mesh.inboundTrafficPolicy?.mode !== "LOCALHOST") return "";
  return proxy.ipAddresses.every((ip) => isIP(ip) === 6) ? "::1" : "127.0.0.1";
}
