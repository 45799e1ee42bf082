// The push features: the feature flags that shape generated config, as istiod reads them from its
// environment (Istio's pilot/pkg/features), given to every push context built (storePush).

import type { GatewayApiFeatures } from "../gatewayapi/index.ts";
import { envBool } from "../util/index.ts";
import type { PushFeatures } from "./push-inputs.ts";

export type { PushFeatures };

/** The feature flags as istiod reads them from its environment. */
export function pushFeaturesFromEnv(env: Record<string, string | undefined>): PushFeatures & GatewayApiFeatures {
  const flag = (name: string, fallback: boolean) => envBool(env, name, fallback);
  return {
    persistentSessions: flag("PILOT_ENABLE_PERSISTENT_SESSION_FILTER", false),
    scopeGatewayToNamespace: flag("PILOT_SCOPE_GATEWAY_TO_NAMESPACE", false),
    mongoFilter: flag("PILOT_ENABLE_MONGO_FILTER", true),
    redisFilter: flag("PILOT_ENABLE_REDIS_FILTER", false),
    mysqlFilter: flag("PILOT_ENABLE_MYSQL_FILTER", false),
    quicListeners: flag("PILOT_ENABLE_QUIC_LISTENERS", false),
    vhds: flag("SLUICE_ENABLE_VHDS", false),
    xdsCache: flag("PILOT_ENABLE_XDS_CACHE", true),
    ipAutoallocate: flag("PILOT_ENABLE_IP_AUTOALLOCATE", true),
    // Which Gateway API kinds the conversion reads (the kube source watches them under the same flags).
    alphaGatewayApi: flag("PILOT_ENABLE_ALPHA_GATEWAY_API", false),
    inferenceExtension: flag("ENABLE_GATEWAY_API_INFERENCE_EXTENSION", false),
  };
}
