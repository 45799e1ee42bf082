// DestinationRule loadBalancer → lb_policy and lb_config (Istio's applyLoadBalancer,
// applyLocalityLoadBalancer and ApplyRingHashLoadBalancer in cluster_traffic_policy.go).
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { cluster } from "../../api/index.ts";
import type {
  DestinationRuleTrafficPolicyLoadBalancer,
  DestinationRuleTrafficPolicyLoadBalancerLocalityLbSetting,
} from "../../config/types/index.ts";
import { toDuration } from "../duration.ts";

type ClusterInit = MessageInitShape<typeof cluster.ClusterSchema>;
type CommonLbInit = MessageInitShape<typeof cluster.Cluster_CommonLbConfigSchema>;
type SlowStart = cluster.Cluster_SlowStartConfig;

const LbPolicy = cluster.Cluster_LbPolicy;
const DiscoveryType = cluster.Cluster_DiscoveryType;

/**
 * Sets locality-weighted balancing when it matters: with `distribute`, or with failover settings on a
 * cluster that has outlier detection (failover never triggers without it). Call after outlier detection.
 */
export function applyLocalityWeightedConfig(
  draft: cluster.Cluster,
  common: CommonLbInit,
  locality: DestinationRuleTrafficPolicyLoadBalancerLocalityLbSetting | undefined,
): void {
  const failoverCapable = draft.outlierDetection !== undefined;
  const hasFailover = (locality?.failover?.length ?? 0) > 0 || (locality?.failoverPriority?.length ?? 0) > 0;
  if ((locality?.distribute?.length ?? 0) > 0 || (failoverCapable && hasFailover)) {
    common.localityConfigSpecifier = {
      case: "localityWeightedLbConfig",
      value: create(cluster.Cluster_CommonLbConfig_LocalityWeightedLbConfigSchema),
    };
  }
}

/**
 * lb_policy and lb_config; PASSTHROUGH turns the cluster into ORIGINAL_DST (dropping any inline
 * endpoints). A redis port served by redis_proxy (`redisProxied`) is MAGLEV whatever the rule says.
 */
export function applyLoadBalancer(
  draft: cluster.Cluster,
  lb: DestinationRuleTrafficPolicyLoadBalancer | undefined,
  redisProxied = false,
): void {
  if (discoveryType(draft) === DiscoveryType.ORIGINAL_DST) {
    draft.lbPolicy = LbPolicy.CLUSTER_PROVIDED;
    return;
  }
  // redis_proxy hashes keys to hosts: a consistent hash keeps each key on one shard.
  if (redisProxied) {
    draft.lbPolicy = LbPolicy.MAGLEV;
    return;
  }
  switch (lb?.simple) {
    case "LEAST_CONN":
    case "LEAST_REQUEST":
      leastRequest(draft, lb);
      break;
    case "RANDOM":
      draft.lbPolicy = LbPolicy.RANDOM;
      break;
    case "ROUND_ROBIN":
      draft.lbPolicy = LbPolicy.ROUND_ROBIN;
      if (slowStart(lb)) {
        draft.lbConfig = {
          case: "roundRobinLbConfig",
          value: create(cluster.Cluster_RoundRobinLbConfigSchema, { slowStartConfig: slowStart(lb) }),
        };
      }
      break;
    case "PASSTHROUGH":
      draft.lbPolicy = LbPolicy.CLUSTER_PROVIDED;
      draft.clusterDiscoveryType = { case: "type", value: DiscoveryType.ORIGINAL_DST };
      delete draft.loadAssignment;
      break;
    default:
      leastRequest(draft, lb);
  }
  applyConsistentHash(draft, lb);
}

function leastRequest(draft: cluster.Cluster, lb: DestinationRuleTrafficPolicyLoadBalancer | undefined): void {
  draft.lbPolicy = LbPolicy.LEAST_REQUEST;
  const slow = slowStart(lb);
  if (slow) {
    draft.lbConfig = {
      case: "leastRequestLbConfig",
      value: create(cluster.Cluster_LeastRequestLbConfigSchema, { slowStartConfig: slow }),
    };
  }
}

/** `warmup` (aggression 1 and 10% minimum weight by default), else the deprecated warmupDurationSecs. */
function slowStart(lb: DestinationRuleTrafficPolicyLoadBalancer | undefined): SlowStart | undefined {
  if (lb?.warmup) {
    return create(cluster.Cluster_SlowStartConfigSchema, {
      slowStartWindow: toDuration(lb.warmup.duration),
      // Istio fixes the runtime key to "(" (it is not exposed to users).
      aggression: { defaultValue: lb.warmup.aggression ?? 1, runtimeKey: "(" },
      minWeightPercent: { value: lb.warmup.minimumPercent ?? 10 },
    });
  }
  const window = toDuration(lb?.warmupDurationSecs);
  return window ? create(cluster.Cluster_SlowStartConfigSchema, { slowStartWindow: window }) : undefined;
}

/**
 * consistentHash → MAGLEV or RING_HASH (1024 minimum ring size unless set). The hash key goes on routes.
 * It sets messages, so the draft may be a Cluster message as well as an init.
 */
export function applyConsistentHash(
  draft: ClusterInit,
  lb: DestinationRuleTrafficPolicyLoadBalancer | undefined,
): void {
  const hash = lb?.consistentHash;
  if (!hash) return;
  if (hash.maglev) {
    draft.lbPolicy = LbPolicy.MAGLEV;
    // Without a table size Istio leaves lb_config as it was.
    if (hash.maglev.tableSize) {
      draft.lbConfig = {
        case: "maglevLbConfig",
        value: create(cluster.Cluster_MaglevLbConfigSchema, { tableSize: BigInt(hash.maglev.tableSize) }),
      };
    }
    return;
  }
  draft.lbPolicy = LbPolicy.RING_HASH;
  if (hash.ringHash) {
    if (hash.ringHash.minimumRingSize) {
      draft.lbConfig = { case: "ringHashLbConfig", value: ringHash(BigInt(hash.ringHash.minimumRingSize)) };
    }
    return;
  }
  draft.lbConfig = { case: "ringHashLbConfig", value: ringHash(BigInt(hash.minimumRingSize || 1024)) };
}

function ringHash(minimumRingSize: bigint): cluster.Cluster_RingHashLbConfig {
  return create(cluster.Cluster_RingHashLbConfigSchema, { minimumRingSize });
}

export function discoveryType(draft: ClusterInit): cluster.Cluster_DiscoveryType | undefined {
  return draft.clusterDiscoveryType?.case === "type" ? draft.clusterDiscoveryType.value : undefined;
}
