// istio.stats: Istio's standard metrics, when a Prometheus metrics provider applies. Inbound and
// gateway connections do not fall back to the Host header for the destination service.

import { STATS_TYPE_URL } from "./extension-types.ts";
import { typedStructHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

const outbound = typedStructHttpFilter("istio.stats", STATS_TYPE_URL, {});
const inboundOrGateway = typedStructHttpFilter("istio.stats", STATS_TYPE_URL, { disable_host_header_fallback: true });

export const istioStats: HttpFilterPlugin = {
  name: "istio.stats",
  httpFilters(context) {
    if (!context.prometheusStats) return [];
    return [context.listenerClass === "sidecarOutbound" ? outbound : inboundOrGateway];
  },
};
