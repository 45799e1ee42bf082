// DestinationRule outlierDetection → Envoy outlier detection (Istio's applyOutlierDetection). Success-rate
// ejection is always off; the panic threshold is set (0 unless minHealthPercent) so that few-pod services
// do not fall into Envoy's panic mode.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { cluster } from "../../api/index.ts";
import type { DestinationRuleTrafficPolicyOutlierDetection } from "../../config/types/index.ts";
import { toDuration } from "../duration.ts";

type CommonLbInit = MessageInitShape<typeof cluster.Cluster_CommonLbConfigSchema>;
type OutlierInit = MessageInitShape<typeof cluster.OutlierDetectionSchema>;

export function applyOutlierDetection(
  draft: cluster.Cluster,
  common: CommonLbInit,
  outlier: DestinationRuleTrafficPolicyOutlierDetection | undefined,
): void {
  if (!outlier) return;
  const out: OutlierInit = { enforcingSuccessRate: 0 };
  // The deprecated consecutiveErrors is not read, as in Istio.
  const c5xx = outlier.consecutive5xxErrors;
  if (c5xx !== undefined && c5xx !== null) {
    out.consecutive5xx = c5xx;
    out.enforcingConsecutive5xx = c5xx > 0 ? 100 : 0;
  }
  const gateway = outlier.consecutiveGatewayErrors;
  if (gateway !== undefined && gateway !== null) {
    out.consecutiveGatewayFailure = gateway;
    out.enforcingConsecutiveGatewayFailure = gateway > 0 ? 100 : 0;
  }
  const interval = toDuration(outlier.interval);
  if (interval) out.interval = interval;
  const baseEjection = toDuration(outlier.baseEjectionTime);
  if (baseEjection) out.baseEjectionTime = baseEjection;
  if (outlier.maxEjectionPercent && outlier.maxEjectionPercent > 0) {
    out.maxEjectionPercent = outlier.maxEjectionPercent;
  }
  if (outlier.splitExternalLocalOriginErrors) {
    out.splitExternalLocalOriginErrors = true;
    const local = outlier.consecutiveLocalOriginFailures;
    if (local && local > 0) {
      out.consecutiveLocalOriginFailure = local;
      out.enforcingConsecutiveLocalOriginFailure = 100;
    }
    out.enforcingLocalOriginSuccessRate = 0;
  }
  draft.outlierDetection = create(cluster.OutlierDetectionSchema, out);
  const minHealth = outlier.minHealthPercent ?? 0;
  if (minHealth >= 0) common.healthyPanicThreshold = { value: minHealth };
}
