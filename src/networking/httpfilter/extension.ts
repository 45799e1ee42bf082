// HTTP TrafficExtensions in the filter chain (WasmPlugins among them): one filter per extension, in the
// place of its phase (before authn, before authz, after authz for STATS and unspecified), by priority.
import { type ExtensionPhase, extensionHttpFilter, extensionsFor } from "../extension/traffic-extension.ts";
import type { HttpFilterPlugin } from "./types.ts";

function extensionPhaseFilters(phase: ExtensionPhase): HttpFilterPlugin {
  return {
    name: `extension ${phase}`,
    httpFilters: (context) =>
      extensionsFor(context.extensions ?? [], "HTTP", phase, context.listenerClass, context.port).map(
        extensionHttpFilter,
      ),
  };
}

export const extensionAuthn = extensionPhaseFilters("AUTHN");
export const extensionAuthz = extensionPhaseFilters("AUTHZ");
export const extensionStats = extensionPhaseFilters("STATS");
export const extensionUnspecified = extensionPhaseFilters("UNSPECIFIED");
