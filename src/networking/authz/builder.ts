// AuthorizationPolicies → Envoy RBAC and ext_authz filters (Istio's authz builder).
//
// Enforcing builder: one RBAC filter per action, in the order AUDIT (RBAC action LOG), DENY, ALLOW;
// enforced policies go to `rules`, dry-run ones to `shadowRules`. CUSTOM builder: per provider, an
// RBAC filter whose shadow rules record which CUSTOM policy matched, then the provider's ext_authz
// filter, which runs only when one did. A provider that cannot be used denies what its policies match.
import { create } from "@bufbuild/protobuf";
import { extAuthz, hcm, httpRbac, listener, networkRbac, packAny, rbac } from "../../api/index.ts";
import type { MeshConfig } from "../../config/index.ts";
import { parseGoBool } from "../../util/index.ts";
import {
  EXT_AUTHZ_POLICY_PREFIX,
  EXT_AUTHZ_SHADOW_STAT_PREFIX,
  HTTP_RBAC_FILTER,
  NETWORK_RBAC_FILTER,
  type RegistryService,
  type ResolvedProvider,
  resolveExtAuthzProviders,
} from "./extauthz.ts";
import { NotGenerated } from "./generator.ts";
import type { AuthzPolicy, PoliciesByAction } from "./policy-select.ts";
import { matchNothingPolicy, rulePolicy } from "./rule.ts";
import type { TrustDomainBundle } from "./trust-domain.ts";

const HTTP_EXT_AUTHZ_FILTER = "envoy.filters.http.ext_authz";
const NETWORK_EXT_AUTHZ_FILTER = "envoy.filters.network.ext_authz";
const TCP_STAT_PREFIX = "tcp.";
const DRY_RUN_ALLOW_STAT_PREFIX = "istio_dry_run_allow_";
const DRY_RUN_DENY_STAT_PREFIX = "istio_dry_run_deny_";
const DRY_RUN_ANNOTATION = "istio.io/dry-run";
const BAD_CUSTOM_ACTION_SUFFIX = "-deny-due-to-bad-CUSTOM-action";

export interface CustomAuthzOptions {
  /** MeshConfig `extensionProviders`. */
  extensionProviders: NonNullable<MeshConfig["extensionProviders"]>;
  /** Services the providers' `service` fields resolve against. */
  services: readonly RegistryService[];
  /** PILOT_ENABLE_MULTIPLE_CUSTOM_AUTHZ_PROVIDERS: more than one provider per workload. Off by default. */
  multipleProviders?: boolean;
}

export interface AuthzBuildOptions {
  /** The local trust domain and its aliases; empty when none is configured. */
  trustDomains?: TrustDomainBundle;
  /** Match peer identities through the peer principal filter state instead of `authenticated`. */
  useFilterState?: boolean;
  /** Build the CUSTOM policies' filters (and only those) instead of the enforcing ones. */
  custom?: CustomAuthzOptions;
}

export interface AuthzFilters<Filter> {
  filters: Filter[];
  /** Rules left out and providers that could not be used, as Istio logs them. */
  problems: string[];
}

/** The HTTP filters (for the HTTP connection manager) of the policies of one workload. */
export function buildHttpAuthzFilters(
  policies: PoliciesByAction,
  options: AuthzBuildOptions = {},
): AuthzFilters<hcm.HttpFilter> {
  return build(policies, options, false, (rbacConfig, ext) => {
    const filters = [
      httpFilter(HTTP_RBAC_FILTER, packAny(httpRbac.RBACSchema, create(httpRbac.RBACSchema, rbacConfig))),
    ];
    if (ext) filters.push(httpFilter(HTTP_EXT_AUTHZ_FILTER, packAny(extAuthz.ExtAuthzSchema, ext.http)));
    return filters;
  });
}

/** The listener filters (before tcp_proxy) of the policies of one workload; HTTP-only rules are dropped. */
export function buildTcpAuthzFilters(
  policies: PoliciesByAction,
  options: AuthzBuildOptions = {},
): AuthzFilters<listener.Filter> {
  return build(policies, options, true, (rbacConfig, ext) => {
    const config = create(networkRbac.RBACSchema, { ...rbacConfig, statPrefix: TCP_STAT_PREFIX });
    const filters = [networkFilter(NETWORK_RBAC_FILTER, packAny(networkRbac.RBACSchema, config))];
    if (ext?.tcp) filters.push(networkFilter(NETWORK_EXT_AUTHZ_FILTER, ext.tcp));
    return filters;
  });
}

/** The fields the HTTP and network RBAC filter configs share. */
interface RbacConfig {
  rules?: rbac.RBAC;
  shadowRules?: rbac.RBAC;
  shadowRulesStatPrefix?: string;
}

type UsableProvider = Extract<ResolvedProvider, { http: unknown }>;

/** Turns one RBAC config (and, for CUSTOM, its provider) into the filters of one chain type. */
type Emit<Filter> = (rbacConfig: RbacConfig, ext?: UsableProvider) => Filter[];

function build<Filter>(
  policies: PoliciesByAction,
  options: AuthzBuildOptions,
  forTcp: boolean,
  emit: Emit<Filter>,
): AuthzFilters<Filter> {
  const problems: string[] = [];
  const context: BuildContext = {
    forTcp,
    useAuthenticated: !options.useFilterState,
    trustDomains: options.trustDomains ?? [],
    problems,
  };
  if (options.custom) return { filters: buildCustom(policies.custom, options.custom, context, emit), problems };

  const filters: Filter[] = [];
  const groups: [AuthzPolicy[], rbac.RBAC_Action][] = [
    [policies.audit, rbac.RBAC_Action.LOG],
    [policies.deny, rbac.RBAC_Action.DENY],
    [policies.allow, rbac.RBAC_Action.ALLOW],
  ];
  for (const [group, action] of groups) {
    if (group.length === 0) continue;
    const enforced = newRbac(action);
    const dryRun = newRbac(action);
    let hasEnforced = false;
    let hasDryRun = false;
    for (const policy of group) {
      const shadow = isDryRun(policy, problems);
      if (shadow) hasDryRun = true;
      else hasEnforced = true;
      addPolicy(shadow ? dryRun : enforced, policy, "", context);
    }
    filters.push(
      ...emit({
        rules: hasEnforced ? enforced : undefined,
        shadowRules: hasDryRun ? dryRun : undefined,
        shadowRulesStatPrefix: dryRunStatPrefix(hasDryRun ? action : rbac.RBAC_Action.ALLOW),
      }),
    );
  }
  return { filters, problems };
}

interface BuildContext {
  forTcp: boolean;
  useAuthenticated: boolean;
  trustDomains: TrustDomainBundle;
  problems: string[];
}

function buildCustom<Filter>(
  policies: readonly AuthzPolicy[],
  custom: CustomAuthzOptions,
  context: BuildContext,
  emit: Emit<Filter>,
): Filter[] {
  if (policies.length === 0) return [];
  const byProvider = new Map<string, { enforced: rbac.RBAC; dryRun: rbac.RBAC }>();
  for (const policy of policies) {
    const provider = policy.spec.provider?.name ?? "";
    let rules = byProvider.get(provider);
    if (!rules) {
      rules = { enforced: newRbac(rbac.RBAC_Action.DENY), dryRun: newRbac(rbac.RBAC_Action.DENY) };
      byProvider.set(provider, rules);
    }
    const prefix = provider === "" ? `${EXT_AUTHZ_POLICY_PREFIX}-` : `${EXT_AUTHZ_POLICY_PREFIX}-${provider}-`;
    addPolicy(isDryRun(policy, context.problems) ? rules.dryRun : rules.enforced, policy, prefix, context);
  }

  const providerNames = [...byProvider.keys()].sort();
  const denyAll = (name: string) => emit({ rules: badCustomDeny(byProvider.get(name)?.enforced) });
  if (providerNames.length > 1 && !custom.multipleProviders) {
    context.problems.push(
      `multiple CUSTOM authorization providers per workload require PILOT_ENABLE_MULTIPLE_CUSTOM_AUTHZ_PROVIDERS, found ${providerNames.join(", ")}`,
    );
    return providerNames.flatMap(denyAll);
  }

  const resolved = resolveExtAuthzProviders(custom.extensionProviders, custom.services);
  return providerNames.flatMap((name) => {
    const provider = resolved.get(name);
    if (provider?.http === undefined) {
      const why = provider
        ? provider.problems.join("; ")
        : `available providers are [${[...resolved.keys()].join(" ")}] but found "${name}"`;
      context.problems.push(`failed to process CUSTOM action for provider ${name}, will generate deny configs: ${why}`);
      return denyAll(name);
    }
    // An HTTP-only provider has nothing to run on a TCP chain.
    if (context.forTcp && provider.tcp === undefined) return [];
    const rules = byProvider.get(name);
    return emit(
      {
        // The RBAC filter only records which CUSTOM policy matched (its shadow result); ext_authz enforces.
        shadowRules: rules?.enforced,
        shadowRulesStatPrefix: EXT_AUTHZ_SHADOW_STAT_PREFIX,
        // Istio puts dry-run CUSTOM policies in `rules`; they record a match the same way.
        rules: rules && Object.keys(rules.dryRun.policies).length > 0 ? rules.dryRun : undefined,
      },
      provider,
    );
  });
}

function newRbac(action: rbac.RBAC_Action): rbac.RBAC {
  return create(rbac.RBACSchema, { action });
}

/** Adds a policy's rules as `<prefix>ns[<ns>]-policy[<name>]-rule[<i>]`; a policy without rules matches nothing. */
function addPolicy(target: rbac.RBAC, policy: AuthzPolicy, prefix: string, context: BuildContext): void {
  const rules = policy.spec.rules ?? [];
  const name = (index: number) => `${prefix}ns[${policy.namespace}]-policy[${policy.name}]-rule[${index}]`;
  rules.forEach((rule, index) => {
    if (rule === null || rule === undefined) {
      context.problems.push(`skipped nil rule ${name(index)}`);
      return;
    }
    const generated = rulePolicy(rule, {
      policyNamespace: policy.namespace,
      trustDomains: context.trustDomains,
      action: target.action,
      forTcp: context.forTcp,
      useAuthenticated: context.useAuthenticated,
    });
    if (generated instanceof NotGenerated) {
      context.problems.push(`skipped rule ${name(index)}: ${generated.reason}`);
      return;
    }
    target.policies[name(index)] = generated;
  });
  if (rules.length === 0) target.policies[name(0)] = matchNothingPolicy();
}

/** The `istio.io/dry-run` annotation, read as Go's strconv.ParseBool (anything else: enforced). */
function isDryRun(policy: AuthzPolicy, problems: string[]): boolean {
  const value = policy.annotations[DRY_RUN_ANNOTATION];
  if (value === undefined) return false;
  const dryRun = parseGoBool(value);
  if (dryRun === undefined) {
    problems.push(`failed to parse the value of ${DRY_RUN_ANNOTATION}: ${JSON.stringify(value)}`);
  }
  return dryRun ?? false;
}

// Istio names the shadow stats after the shadow rules' action, reading ALLOW when there are none.
function dryRunStatPrefix(action: rbac.RBAC_Action): string {
  if (action === rbac.RBAC_Action.ALLOW) return DRY_RUN_ALLOW_STAT_PREFIX;
  if (action === rbac.RBAC_Action.DENY) return DRY_RUN_DENY_STAT_PREFIX;
  return "";
}

/** Denies everything the policies of an unusable provider match. */
function badCustomDeny(enforced: rbac.RBAC | undefined): rbac.RBAC {
  const deny = newRbac(rbac.RBAC_Action.DENY);
  for (const [name, policy] of Object.entries(enforced?.policies ?? {})) {
    deny.policies[name + BAD_CUSTOM_ACTION_SUFFIX] = policy;
  }
  return deny;
}

function httpFilter(name: string, typedConfig: ReturnType<typeof packAny>): hcm.HttpFilter {
  return create(hcm.HttpFilterSchema, { name, configType: { case: "typedConfig", value: typedConfig } });
}

function networkFilter(name: string, typedConfig: ReturnType<typeof packAny>): listener.Filter {
  return create(listener.FilterSchema, { name, configType: { case: "typedConfig", value: typedConfig } });
}
