// DestinationRule proxyProtocol: the upstream connection starts with a PROXY protocol header (Istio's
// applyUpstreamProxyProtocol), by wrapping the cluster's transport socket(s), or plaintext when there is
// none, in envoy.transport_sockets.upstream_proxy_protocol.
import { create } from "@bufbuild/protobuf";
import { cluster, core, packAny, upstreamProxyProtocol } from "../../api/index.ts";
import type { DestinationRuleTrafficPolicyProxyProtocol } from "../../config/types/index.ts";
import { INNER_RAW_BUFFER_SOCKET } from "./tls.ts";

export const UPSTREAM_PROXY_PROTOCOL_SOCKET = "envoy.transport_sockets.upstream_proxy_protocol";

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
  draft.transportSocket = wrap(draft.transportSocket ?? INNER_RAW_BUFFER_SOCKET, version);
}

function wrap(inner: core.TransportSocket, version: "V1" | "V2"): core.TransportSocket {
  const schema = upstreamProxyProtocol.ProxyProtocolUpstreamTransportSchema;
  const config = create(schema, {
    config: { version: version === "V2" ? core.ProxyProtocolConfig_Version.V2 : core.ProxyProtocolConfig_Version.V1 },
    transportSocket: inner,
  });
  return create(core.TransportSocketSchema, {
    name: UPSTREAM_PROXY_PROTOCOL_SOCKET,
    configType: { case: "typedConfig", value: packAny(schema, config) },
  });
}
