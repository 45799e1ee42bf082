// envoy.filters.http.rbac: the AUDIT, DENY and ALLOW AuthorizationPolicies, one filter per action
// present, after authentication. Sidecar inbound and gateways only.
import { buildHttpAuthzFilters } from "../authz/index.ts";
import type { HttpFilterPlugin } from "./types.ts";

export const rbac: HttpFilterPlugin = {
  name: "envoy.filters.http.rbac",
  httpFilters(context) {
    if (context.listenerClass === "sidecarOutbound" || !context.authz) return [];
    const built = buildHttpAuthzFilters(context.authz, context.authzOptions);
    for (const problem of built.problems) context.report?.(problem);
    return built.filters;
  },
};
