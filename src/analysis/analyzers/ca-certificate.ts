// destinationrule.CaCertificateAnalyzer: SIMPLE or MUTUAL TLS without caCertificates does not verify the
// server, unless a credentialName is used by a DestinationRule with a workload selector.
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, fullName, specOf } from "../resource.ts";

export const caCertificateAnalyzer: Analyzer = {
  name: "destinationrule.CaCertificateAnalyzer",
  description: "Checks if caCertificates is set when TLS mode is SIMPLE/MUTUAL",
  inputs: [K.DestinationRule],
  analyze(ctx) {
    for (const r of ctx.list(K.DestinationRule)) {
      const spec = specOf(r);
      const policy = asRecord(spec.trafficPolicy);
      const hasSelector = spec.workloadSelector !== undefined && spec.workloadSelector !== null;
      const host = asString(spec.host);
      const tlsMode = unverifiedMode(asRecord(policy.tls), hasSelector);
      if (tlsMode) {
        const m = newMessage(
          MESSAGES.NoServerCertificateVerificationDestinationLevel,
          r,
          fullName(r),
          r.namespace,
          tlsMode,
          host,
        );
        ctx.report(atField(m, "{.spec.trafficPolicy.tls.caCertificates}"));
      }
      for (const [i, portSettings] of asArray(policy.portLevelSettings).entries()) {
        const settings = asRecord(portSettings);
        const mode = unverifiedMode(asRecord(settings.tls), hasSelector);
        if (!mode) continue;
        const port = `number:${asRecord(settings.port).number ?? 0}`;
        const m = newMessage(
          MESSAGES.NoServerCertificateVerificationPortLevel,
          r,
          fullName(r),
          r.namespace,
          mode,
          host,
          port,
        );
        ctx.report(atField(m, `{.spec.trafficPolicy.portLevelSettings[${i}].tls.caCertificates}`));
      }
    }
  },
};

/** The TLS mode when it is SIMPLE or MUTUAL and nothing verifies the server's certificate. */
function unverifiedMode(tls: Record<string, unknown>, hasSelector: boolean): string | undefined {
  const mode = asString(tls.mode);
  if (mode !== "SIMPLE" && mode !== "MUTUAL") return undefined;
  if (asString(tls.caCertificates) !== "") return undefined;
  if (asString(tls.credentialName) !== "" && hasSelector) return undefined;
  return mode;
}
