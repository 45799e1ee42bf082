// telemetry.ProviderAnalyzer: without a default access-logging provider in the mesh config, every
// enabled access-logging entry of a Telemetry must name its providers.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, specOf } from "../resource.ts";

export const telemetryProviderAnalyzer: Analyzer = {
  name: "telemetry.ProviderAnalyzer",
  description: "Validates that providers in telemetry resource is valid",
  inputs: [K.Telemetry, K.MeshConfig],
  analyze(ctx) {
    const defaults = asArray(asRecord(ctx.meshConfig().defaultProviders).accessLogging);
    if (defaults.length > 0) return;
    for (const telemetry of ctx.list(K.Telemetry)) {
      for (const logging of asArray(specOf(telemetry).accessLogging).map(asRecord)) {
        if (logging.disabled === true) continue;
        if (asArray(logging.providers).length === 0) {
          ctx.report(newMessage(MESSAGES.InvalidTelemetryProvider, telemetry, telemetry.name, telemetry.namespace));
        }
      }
    }
  },
};
