// AuthorizationPolicy for xDS-enabled gRPC servers (Istio's grpcgen buildRBAC): gRPC's RBAC filter
// takes ALLOW and DENY only, so the server chain gets a DENY filter then an ALLOW filter, each rule a
// policy named `<namespace>-<policy>-<rule index>`, peers matched by their certificate's identity
// (`authenticated`). AUDIT and CUSTOM policies have no gRPC form and are left out, as in Istio.
import { create } from "@bufbuild/protobuf";
import { hcm, httpRbac, packAny, rbac } from "../../api/index.ts";
import {
  type AuthzPolicy,
  NotGenerated,
  type PoliciesByAction,
  rulePolicy,
  type TrustDomainBundle,
  trustDomainBundle,
} from "../authz/index.ts";

export const GRPC_RBAC_FILTER = "envoy.filters.http.rbac";
export const GRPC_RBAC_DENY_FILTER = "envoy.filters.http.rbac.DENY";

export interface GrpcRbacFilters {
  filters: hcm.HttpFilter[];
  /** Rules left out, as Istio logs them. */
  problems: string[];
}

function rbacRules(
  policies: readonly AuthzPolicy[],
  action: rbac.RBAC_Action,
  trustDomains: TrustDomainBundle,
  problems: string[],
): rbac.RBAC {
  const rules = create(rbac.RBACSchema, { action });
  for (const policy of policies) {
    (policy.spec.rules ?? []).forEach((rule, index) => {
      const name = `${policy.namespace}-${policy.name}-${index}`;
      if (!rule) return;
      const generated = rulePolicy(rule, {
        policyNamespace: policy.namespace,
        trustDomains,
        action,
        forTcp: false,
        useAuthenticated: true,
      });
      if (generated instanceof NotGenerated) problems.push(`invalid rule ${name}: ${generated.reason}`);
      else rules.policies[name] = generated;
    });
  }
  return rules;
}

function rbacFilter(name: string, rules: rbac.RBAC): hcm.HttpFilter {
  const config = packAny(httpRbac.RBACSchema, create(httpRbac.RBACSchema, { rules }));
  return create(hcm.HttpFilterSchema, { name, configType: { case: "typedConfig", value: config } });
}

/**
 * The RBAC filters of a server chain, DENY first; none without ALLOW or DENY policies. Principals
 * are written for the local trust domain only: Istio's grpcgen does not expand trust domain aliases.
 */
export function buildGrpcRbacFilters(policies: PoliciesByAction, trustDomain = "cluster.local"): GrpcRbacFilters {
  const problems: string[] = [];
  const trustDomains = trustDomainBundle(trustDomain);
  const filters: hcm.HttpFilter[] = [];
  const deny = rbacRules(policies.deny, rbac.RBAC_Action.DENY, trustDomains, problems);
  if (Object.keys(deny.policies).length > 0) filters.push(rbacFilter(GRPC_RBAC_DENY_FILTER, deny));
  // Istio drops an ALLOW filter left without policies, which would allow everything; kept here, so
  // that ALLOW policies matching nothing deny everything, as they do for sidecars.
  if (policies.allow.length > 0)
    filters.push(
      rbacFilter(GRPC_RBAC_FILTER, rbacRules(policies.allow, rbac.RBAC_Action.ALLOW, trustDomains, problems)),
    );
  return { filters, problems };
}
