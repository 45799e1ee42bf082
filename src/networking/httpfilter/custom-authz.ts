// CUSTOM AuthorizationPolicies: per provider, an RBAC filter recording which policy matched, then
// the provider's ext_authz filter. Sidecar inbound and gateways only; they run before authentication.
import { buildHttpAuthzFilters } from "../authz/index.ts";
import type { HttpFilterPlugin } from "./types.ts";

export const customAuthz: HttpFilterPlugin = {
  name: "envoy.filters.http.ext_authz",
  httpFilters(context) {
    if (context.listenerClass === "sidecarOutbound" || !context.authz || !context.customAuthz) return [];
    const built = buildHttpAuthzFilters(context.authz, { ...context.authzOptions, custom: context.customAuthz });
    for (const problem of built.problems) context.report?.(problem);
    return built.filters;
  },
};
