// The HTTP filters of a waypoint's HBONE terminating connection manager (Istio's xds filters
// WaypointDownstreamMetadataFilter and ConnectAuthorityFilter): the peer's metadata found by its
// workload, and the CONNECT authority (the inner destination) and the peers' identities kept as
// filter state the inner listeners read; and of its per-service connection managers, the upstream
// peer's metadata (WaypointUpstreamMetadataFilter).
import { create } from "@bufbuild/protobuf";
import { type hcm, setFilterStateHttp, setFilterStateValue } from "../../api/index.ts";
import { type ProxyNode, versionAtLeast } from "../../model/index.ts";
import { PEER_METADATA_TYPE_URL } from "./extension-types.ts";
import { typedHttpFilter, typedStructHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

const ONCE = setFilterStateValue.FilterStateValue_SharedWithUpstream.ONCE;

/** The original destination listener filter reads the inner destination from this key. */
export const ORIGINAL_DST_LOCAL_IP_KEY = "envoy.filters.listener.original_dst.local_ip";

/** The peer's metadata, found by its workload, shared with the upstream (the inner listeners). */
export const WAYPOINT_DOWNSTREAM_PEER_METADATA = typedStructHttpFilter(
  "waypoint_downstream_peer_metadata",
  PEER_METADATA_TYPE_URL,
  { downstream_discovery: [{ workload_discovery: {} }], shared_with_upstream: true },
);

/** The upstream peer's metadata, found by its workload (Istio's WaypointUpstreamMetadataFilter). */
export const WAYPOINT_UPSTREAM_PEER_METADATA = typedStructHttpFilter(
  "waypoint_upstream_peer_metadata",
  PEER_METADATA_TYPE_URL,
  { upstream_discovery: [{ workload_discovery: {} }] },
);

/** A waypoint's service connection managers learn who they send to, after authorization and before stats. */
export const waypointUpstreamMetadata: HttpFilterPlugin = {
  name: "waypoint_upstream_peer_metadata",
  httpFilters: () => [WAYPOINT_UPSTREAM_PEER_METADATA],
};

/** A filter state value set from `format`, once shared with the upstream connection. */
export function filterStateValue(
  objectKey: string,
  format: string,
  factoryKey = "",
  sharedWithUpstream = ONCE,
): setFilterStateValue.FilterStateValue {
  return create(setFilterStateValue.FilterStateValueSchema, {
    key: { case: "objectKey", value: objectKey },
    factoryKey,
    value: {
      case: "formatString",
      value: { format: { case: "textFormatSource", value: { specifier: { case: "inlineString", value: format } } } },
    },
    sharedWithUpstream,
  });
}

/**
 * Proxies before 1.29.2 know no `istio.hashable_string` filter state factory; Envoy's `envoy.string` stands in.
 * (Istio drops the older form in 1.32.)
 */
export function hashableStringFactory(proxy: Pick<ProxyNode, "istioVersion">): string {
  return versionAtLeast(proxy, 1, 29, 2) ? "istio.hashable_string" : "envoy.string";
}

/** connect_authority: the CONNECT authority as the inner destination, and who the peers are. */
export function connectAuthorityFilter(proxy: Pick<ProxyNode, "istioVersion">): hcm.HttpFilter {
  const hashable = hashableStringFactory(proxy);
  const config = create(setFilterStateHttp.ConfigSchema, {
    onRequestHeaders: [
      filterStateValue(ORIGINAL_DST_LOCAL_IP_KEY, "%REQ(:AUTHORITY)%"),
      filterStateValue("io.istio.connect_authority", "%REQ(:AUTHORITY)%", hashable),
      filterStateValue("envoy.filters.listener.original_dst.remote_ip", "%DOWNSTREAM_REMOTE_ADDRESS%"),
      filterStateValue("io.istio.peer_principal", "%DOWNSTREAM_PEER_URI_SAN%", hashable),
      filterStateValue("io.istio.local_principal", "%DOWNSTREAM_LOCAL_URI_SAN%", hashable),
    ],
  });
  return typedHttpFilter("connect_authority", setFilterStateHttp.ConfigSchema, config);
}
