// WasmPlugins of type HTTP in the filter chain: one config-discovery filter per plugin, in the place of
// its phase (before authn, before authz, after authz for STATS and unspecified), by priority.
import { pluginsFor, type WasmPhase, wasmHttpFilter } from "../wasm/plugin.ts";
import type { HttpFilterPlugin } from "./types.ts";

function wasmPhaseFilters(phase: WasmPhase): HttpFilterPlugin {
  return {
    name: `wasm ${phase}`,
    httpFilters: (context) =>
      pluginsFor(context.wasmPlugins ?? [], "HTTP", phase, context.listenerClass, context.port).map(wasmHttpFilter),
  };
}

export const wasmAuthn = wasmPhaseFilters("AUTHN");
export const wasmAuthz = wasmPhaseFilters("AUTHZ");
export const wasmStats = wasmPhaseFilters("STATS");
export const wasmUnspecified = wasmPhaseFilters("UNSPECIFIED_PHASE");
