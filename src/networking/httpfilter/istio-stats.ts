// istio.stats: Istio's standard metrics, when a Prometheus metrics provider applies (the Telemetry
// API's metric overrides and reporting interval in its config). Inbound and gateway connections do not
// fall back to the Host header for the destination service.

import { STATS_TYPE_URL } from "./extension-types.ts";
import { typedStructHttpFilter } from "./typed.ts";
import type { HttpFilterPlugin } from "./types.ts";

const outbound = typedStructHttpFilter("istio.stats", STATS_TYPE_URL, {});
const inboundOrGateway = typedStructHttpFilter("istio.stats", STATS_TYPE_URL, { disable_host_header_fallback: true });

export const istioStats: HttpFilterPlugin = {
  name: "istio.stats",
  httpFilters(context) {
    if (context.telemetry) {
      const config = context.telemetry.stats(context.listenerClass);
      return config ? [typedStructHttpFilter("istio.stats", STATS_TYPE_URL, config)] : [];
    }
    if (!context.prometheusStats) return [];
    return [context.listenerClass === "sidecarOutbound" ? outbound : inboundOrGateway];
  },
};
