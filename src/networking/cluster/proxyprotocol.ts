// DestinationRule proxyProtocol: the upstream connection starts with a PROXY protocol header (Istio's
// applyUpstreamProxyProtocol), by wrapping the cluster's transport socket(s), or plaintext when there is
// none, in envoy.transport_sockets.upstream_proxy_protocol. Its proto is not among Sluice's generated
// bindings, so the config goes as a TypedStruct, which Envoy decodes as the named type.
import { create, type JsonObject, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { cluster, core, packAny, registry, xdsType } from "../../api/index.ts";
import type { DestinationRuleTrafficPolicyProxyProtocol } from "../../config/types/index.ts";
import { typedStruct } from "../httpfilter/index.ts";
import { rawBufferSocket } from "./tls.ts";

type ClusterInit = MessageInitShape<typeof cluster.ClusterSchema>;
type TransportSocketInit = MessageInitShape<typeof core.TransportSocketSchema>;

export const UPSTREAM_PROXY_PROTOCOL_SOCKET = "envoy.transport_sockets.upstream_proxy_protocol";
export const PROXY_PROTOCOL_UPSTREAM_TYPE_URL =
  "type.googleapis.com/envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport";

export function applyUpstreamProxyProtocol(
  draft: ClusterInit,
  proxyProtocol: DestinationRuleTrafficPolicyProxyProtocol | undefined,
): void {
  if (!proxyProtocol) return;
  const version = proxyProtocol.version ?? "V1";
  const matches = draft.transportSocketMatches ?? [];
  if (matches.length > 0) {
    // New matches: the ones given may be shared by other clusters.
    draft.transportSocketMatches = matches.map((m) =>
      create(cluster.Cluster_TransportSocketMatchSchema, {
        name: m.name,
        match: m.match,
        transportSocket: m.transportSocket && wrap(m.transportSocket, version),
      }),
    );
    return;
  }
  draft.transportSocket = wrap(draft.transportSocket ?? rawBufferSocket(), version);
}

function wrap(inner: TransportSocketInit, version: "V1" | "V2"): TransportSocketInit {
  const innerJson = toJson(core.TransportSocketSchema, create(core.TransportSocketSchema, inner), {
    registry,
    useProtoFieldName: true,
  }) as JsonObject;
  const config = typedStruct(PROXY_PROTOCOL_UPSTREAM_TYPE_URL, {
    config: version === "V2" ? { version: "V2" } : {},
    transport_socket: innerJson,
  });
  return {
    name: UPSTREAM_PROXY_PROTOCOL_SOCKET,
    configType: { case: "typedConfig", value: packAny(xdsType.TypedStructSchema, config) },
  };
}
