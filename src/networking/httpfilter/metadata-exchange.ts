// istio.metadata_exchange (HTTP): discovers the peer's workload metadata from Istio headers or the
// workload discovery service and propagates this proxy's own. Inbound reads the downstream peer,
// outbound and gateways the upstream one (pilot/pkg/xds/filters: Sidecar{In,Out}boundMetadataFilter).
import type { JsonObject } from "@bufbuild/protobuf";
import { PEER_METADATA_TYPE_URL } from "./extension-types.ts";
import { typedStructHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

export const METADATA_EXCHANGE_FILTER = "istio.metadata_exchange";

function peerMetadataConfig(side: "downstream" | "upstream"): JsonObject {
  return {
    [`${side}_discovery`]: [{ istio_headers: {} }, { workload_discovery: {} }],
    [`${side}_propagation`]: [{ istio_headers: {} }],
  };
}

const inbound = typedStructHttpFilter(
  METADATA_EXCHANGE_FILTER,
  PEER_METADATA_TYPE_URL,
  peerMetadataConfig("downstream"),
);
const outbound = typedStructHttpFilter(
  METADATA_EXCHANGE_FILTER,
  PEER_METADATA_TYPE_URL,
  peerMetadataConfig("upstream"),
);

export const metadataExchange: HttpFilterPlugin = {
  name: METADATA_EXCHANGE_FILTER,
  httpFilters: (context) => [context.listenerClass === "sidecarInbound" ? inbound : outbound],
};
