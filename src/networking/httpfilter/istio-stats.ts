// istio.stats: Istio's standard metrics, when a Prometheus metrics provider applies (the Telemetry
// API's metric overrides and reporting interval in its config). Inbound and gateway connections do not
// fall back to the Host header for the destination service.

import { create, fromJson, type JsonObject } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { hcm, packAny, istioStats as statsApi } from "../../api/index.ts";
import type { HttpFilterPlugin } from "./types.ts";

/** `config` (PluginConfig in its proto JSON form) as the stats.PluginConfig message istiod sends. */
export function statsPluginConfig(config: JsonObject): Any {
  return packAny(statsApi.PluginConfigSchema, fromJson(statsApi.PluginConfigSchema, config));
}

const statsFilter = (config: JsonObject) =>
  create(hcm.HttpFilterSchema, {
    name: "istio.stats",
    configType: { case: "typedConfig", value: statsPluginConfig(config) },
  });

const outbound = statsFilter({});
const inboundOrGateway = statsFilter({ disable_host_header_fallback: true });

export const istioStats: HttpFilterPlugin = {
  name: "istio.stats",
  httpFilters(context) {
    if (context.telemetry) {
      const config = context.telemetry.stats(context.listenerClass);
      return config ? [statsFilter(config)] : [];
    }
    if (!context.prometheusStats) return [];
    return [context.listenerClass === "sidecarOutbound" ? outbound : inboundOrGateway];
  },
};
