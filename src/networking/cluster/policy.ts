// Which DestinationRule traffic policy applies to one cluster (Istio's util.MergeTrafficPolicy): the
// top-level policy, replaced field by field by the subset's, and a matching portLevelSettings entry
// replaces connectionPool, loadBalancer, outlierDetection and tls all at once (an unset field there
// falls back to the default, not to the level above).
import type {
  DestinationRuleSpec,
  DestinationRuleTrafficPolicy,
  DestinationRuleTrafficPolicyPortLevelSettings,
} from "../../config/types/index.ts";

/** The policy for `port` of the host, and for the named subset when `subset` is not empty. */
export function effectiveTrafficPolicy(
  spec: DestinationRuleSpec | undefined,
  port: number,
  subset = "",
): DestinationRuleTrafficPolicy | undefined {
  const hostPolicy = mergeTrafficPolicy(undefined, spec?.trafficPolicy, port);
  if (subset === "") return hostPolicy;
  const subsetPolicy = spec?.subsets?.find((s) => s.name === subset)?.trafficPolicy;
  return mergeTrafficPolicy(hostPolicy, subsetPolicy, port);
}

/** `overlay` over `base`, then `overlay`'s settings for `port`. Port-level settings are resolved in the result. */
export function mergeTrafficPolicy(
  base: DestinationRuleTrafficPolicy | undefined,
  overlay: DestinationRuleTrafficPolicy | undefined,
  port: number,
): DestinationRuleTrafficPolicy | undefined {
  if (!overlay) return base;
  const merged: DestinationRuleTrafficPolicy = {
    connectionPool: overlay.connectionPool ?? base?.connectionPool,
    loadBalancer: overlay.loadBalancer ?? base?.loadBalancer,
    outlierDetection: overlay.outlierDetection ?? base?.outlierDetection,
    tls: overlay.tls ?? base?.tls,
    tunnel: overlay.tunnel ?? base?.tunnel,
    proxyProtocol: overlay.proxyProtocol ?? base?.proxyProtocol,
    retryBudget: overlay.retryBudget ?? base?.retryBudget,
  };
  const portLevel = portSettings(overlay, port);
  if (portLevel) {
    merged.connectionPool = portLevel.connectionPool;
    merged.loadBalancer = portLevel.loadBalancer;
    merged.outlierDetection = portLevel.outlierDetection;
    merged.tls = portLevel.tls;
  }
  return merged;
}

function portSettings(
  policy: DestinationRuleTrafficPolicy,
  port: number,
): DestinationRuleTrafficPolicyPortLevelSettings | undefined {
  return policy.portLevelSettings?.find((p) => p.port?.number === port);
}
