// gateway.CertificateAnalyzer: Gateways selecting the same workloads must not serve the same certificate
// (the same credentialName, or the same certificate and key files).
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import { asArray, asRecord, asString, asStringMap, fullName, specOf } from "../resource.ts";

export const gatewayCertificateAnalyzer: Analyzer = {
  name: "gateway.CertificateAnalyzer",
  description: "Checks a gateway certificate",
  inputs: [K.Gateway],
  analyze(ctx) {
    const gateways = ctx.list(K.Gateway);
    for (const current of gateways) {
      const selector = asStringMap(specOf(current).selector);
      const servers = asArray(specOf(current).servers).map(asRecord);
      for (const other of gateways) {
        if (other === current || !selectorSubset(selector, asStringMap(specOf(other).selector))) continue;
        for (const currentServer of servers) {
          for (const server of asArray(specOf(other).servers).map(asRecord)) {
            if (!isRecordLike(currentServer.tls) || !isRecordLike(server.tls)) continue;
            if (!sameCertificate(asRecord(currentServer.tls), asRecord(server.tls))) continue;
            const m = newMessage(MESSAGES.GatewayDuplicateCertificate, current, [fullName(current), fullName(other)]);
            ctx.report(atField(m, "{.metadata.name}"));
          }
        }
      }
    }
  },
};

function isRecordLike(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** Every key of `x` is in `y` with the same value (an empty `x` selects every Gateway). */
function selectorSubset(x: Record<string, string>, y: Record<string, string>): boolean {
  return Object.entries(x).every(([k, v]) => k in y && y[k] === v);
}

function sameCertificate(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const [credentialA, credentialB] = [asString(a.credentialName), asString(b.credentialName)];
  if (credentialA !== "" && credentialB !== "") return credentialA === credentialB;
  if (credentialA !== "" || credentialB !== "") return false;
  const [certA, certB] = [asString(a.serverCertificate), asString(b.serverCertificate)];
  if (certA === "" || certA !== certB) return false;
  const [keyA, keyB] = [asString(a.privateKey), asString(b.privateKey)];
  return keyA !== "" && keyA === keyB;
}
