// DestinationRule proxyProtocol: the upstream connection starts with a PROXY protocol header (Istio's
// applyUpstreamProxyProtocol), by wrapping the cluster's transport socket(s), or plaintext when there is
// none, in envoy.transport_sockets.upstream_proxy_protocol. Its proto is not among Sluice's generated
// bindings, so the config goes as a TypedStruct, which Envoy decodes as the named type.
import { create, type JsonObject, toJson } from "@bufbuild/protobuf";
import { cluster, core, packAny, registry, xdsType } from "../../api/index.ts";
import type { DestinationRuleTrafficPolicyProxyProtocol } from "../../config/types/index.ts";
import { typedStruct } from "../httpfilter/index.ts";
import { RAW_BUFFER_SOCKET } from "./tls.ts";

export const UPSTREAM_PROXY_PROTOCOL_SOCKET = "envoy.transport_sockets.upstream_proxy_protocol";
export const PROXY_PROTOCOL_UPSTREAM_TYPE_URL =
  "type.googleapis.com/envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport";

export function applyUpstreamProxyProtocol(
  draft: cluster.Cluster,
  proxyProtocol: DestinationRuleTrafficPolicyProxyProtocol | undefined,
): void {
  if (!proxyProtocol) return;
  const version = proxyProtocol.version ?? "V1";
  const matches = draft.transportSocketMatches;
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
  draft.transportSocket = wrap(draft.transportSocket ?? RAW_BUFFER_SOCKET, version);
}

function wrap(inner: core.TransportSocket, version: "V1" | "V2"): core.TransportSocket {
  const innerJson = toJson(core.TransportSocketSchema, inner, { registry, useProtoFieldName: true }) as JsonObject;
  const config = typedStruct(PROXY_PROTOCOL_UPSTREAM_TYPE_URL, {
    config: version === "V2" ? { version: "V2" } : {},
    transport_socket: innerJson,
  });
  return create(core.TransportSocketSchema, {
    name: UPSTREAM_PROXY_PROTOCOL_SOCKET,
    configType: { case: "typedConfig", value: packAny(xdsType.TypedStructSchema, config) },
  });
}
