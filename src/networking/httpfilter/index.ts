// HTTP filters of the HTTP connection manager: one file per filter, one ordered registry, router last.

export * from "./extension-types.ts";
export { statsPluginConfig } from "./istio-stats.ts";
export type { ListenerClass } from "./listener-class.ts";
export { envoyViolations } from "./pgv.ts";
export { buildHttpFilters, HTTP_FILTERS, WAYPOINT_HTTP_FILTERS } from "./registry.ts";
export { ROUTER_FILTER, ROUTER_HTTP_FILTER } from "./router.ts";
export {
  PERSISTENT_SESSION_HEADER_LABEL,
  PERSISTENT_SESSION_LABEL,
  STATEFUL_SESSION_FILTER,
  statefulSessionConfig,
  statefulSessionPerRoute,
} from "./stateful-session.ts";
export { istioTypedStruct } from "./typed.ts";
export type { HttpFilterContext, HttpFilterPlugin } from "./types.ts";
export {
  connectAuthorityFilter,
  filterStateValue,
  hashableStringFactory,
  ORIGINAL_DST_LOCAL_IP_KEY,
  WAYPOINT_DOWNSTREAM_PEER_METADATA,
  WAYPOINT_UPSTREAM_PEER_METADATA,
} from "./waypoint.ts";
