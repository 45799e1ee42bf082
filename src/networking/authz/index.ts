// AuthorizationPolicy → Envoy RBAC / ext_authz filters: select a workload's policies, then build.
export {
  type AuthzBuildOptions,
  type AuthzFilters,
  buildHttpAuthzFilters,
  buildTcpAuthzFilters,
  type CustomAuthzOptions,
} from "./builder.ts";
export { lookupService, type RegistryService } from "./extauthz.ts";
export { NotGenerated } from "./generator.ts";
export {
  type AuthzPolicy,
  groupPolicies,
  type PoliciesByAction,
  type SidecarWorkload,
  selectPolicies,
} from "./policy-select.ts";
export { type RuleOptions, rulePolicy } from "./rule.ts";
export { type TrustDomainBundle, trustDomainBundle } from "./trust-domain.ts";
