// gateway.SecretAnalyzer: a Gateway server's TLS credentialName must name a Secret, in the namespace of
// the gateway workload, holding a certificate and key with a currently valid certificate.
import { X509Certificate } from "node:crypto";
import { extractCertInfo, objectValues } from "../../gatewayapi/credentials.ts";
import type { Analyzer } from "../analyzer.ts";
import { K } from "../kinds.ts";
import { firstSelectorKey, selectorMatches, selectorString } from "../labels.ts";
import { atField, newMessage } from "../message.ts";
import { MESSAGES } from "../messages.ts";
import {
  asArray,
  asRecord,
  asString,
  asStringMap,
  labelsOf,
  type Resource,
  shortOrFullName,
  specOf,
} from "../resource.ts";

export const gatewaySecretAnalyzer: Analyzer = {
  name: "gateway.SecretAnalyzer",
  description: "Checks a gateway's referenced secrets for correctness",
  inputs: [K.Gateway, K.Pod, K.Secret],
  analyze(ctx) {
    for (const gateway of ctx.list(K.Gateway)) {
      const selector = asStringMap(specOf(gateway).selector);
      // The namespace of the first pod the selector matches: where the gateway reads its Secrets.
      const namespace = ctx.list(K.Pod).find((pod) => selectorMatches(selector, labelsOf(pod)))?.namespace ?? "";
      if (namespace === "") {
        ctx.report(
          atField(
            newMessage(MESSAGES.ReferencedResourceNotFound, gateway, "selector", selectorString(selector)),
            `{.spec.selector.${firstSelectorKey(selectorString(selector))}}`,
          ),
        );
        continue;
      }
      for (const [i, server] of asArray(specOf(gateway).servers).map(asRecord).entries()) {
        const at = `{.spec.servers[${i}].tls.credentialName}`;
        const credentialName = asString(asRecord(server.tls).credentialName);
        if (credentialName === "") continue;
        const ref = shortOrFullName(namespace, credentialName);
        const secret = ctx.find(K.Secret, ref.namespace, ref.name);
        if (!secret) {
          ctx.report(
            atField(newMessage(MESSAGES.ReferencedResourceNotFound, gateway, "credentialName", credentialName), at),
          );
        } else if (!isValidSecret(secret)) {
          ctx.report(atField(newMessage(MESSAGES.InvalidGatewayCredential, gateway, gateway.name, namespace), at));
        }
      }
    }
  },
};

/** Istio's isValidSecret: a certificate and key, the first PEM certificate parsing and valid now. */
function isValidSecret(secret: Resource): boolean {
  const info = extractCertInfo(objectValues(secret.object));
  if ("error" in info) return false;
  try {
    const cert = new X509Certificate(info.cert);
    const now = Date.now();
    return now >= Date.parse(cert.validFrom) && now <= Date.parse(cert.validTo);
  } catch {
    return false;
  }
}
