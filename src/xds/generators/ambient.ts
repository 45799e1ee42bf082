// The ambient types (WDS `Address` and `Workload`, and `Authorization`) as istiod serves them with
// PILOT_ENABLE_AMBIENT off, its default: its ambient index is then empty (NoopAmbientIndexes), so a
// proxy's request is answered with no resources, and pushes send nothing, except that Authorization
// answers again when an AuthorizationPolicy changed (pilot/pkg/xds/workload.go). Sluice has no ambient
// index yet, so it answers so whatever PILOT_ENABLE_AMBIENT says.
import { kindKey } from "../../config/index.ts";
import type { Generator } from "../generator.ts";
import { isProxyRequest } from "./needs-push.ts";

const AUTHORIZATION_POLICY = kindKey("security.istio.io", "AuthorizationPolicy");

/** Address and Workload (Istio's WorkloadGenerator over an empty index). */
export const workloadGenerator: Generator = {
  generate(_proxy, _watched, req) {
    return isProxyRequest(req) ? { resources: [] } : undefined;
  },
};

/** Authorization (Istio's WorkloadRBACGenerator over an empty index). */
export const workloadAuthorizationGenerator: Generator = {
  generate(_proxy, _watched, req) {
    const policyChanged = [...req.configsUpdated.values()].some((k) => k.kind === AUTHORIZATION_POLICY);
    return req.forced || isProxyRequest(req) || policyChanged ? { resources: [] } : undefined;
  },
};
