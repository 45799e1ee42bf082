// Istio's ClientCertAuthenticator (security/pkg/server/ca/authenticate/cert_authenticator.go): the
// identities are the URI SANs of a client certificate that TLS has already verified.
import { X509Certificate } from "node:crypto";
import type { AuthContext, Authenticator, Caller } from "./authenticator.ts";

export class ClientCertAuthenticator implements Authenticator {
  readonly name = "ClientCertAuthenticator";

  authenticate(ctx: AuthContext): Caller | Error {
    if (!ctx.verifiedPeerCertificate) return new Error("no verified client certificate");
    let identities: string[];
    try {
      identities = uriSans(ctx.verifiedPeerCertificate);
    } catch (err) {
      return new Error(`cannot read the client certificate: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (identities.length === 0) return new Error("the client certificate has no URI SAN");
    return { identities, authenticator: this.name };
  }
}

function uriSans(der: Uint8Array): string[] {
  const san = new X509Certificate(der).subjectAltName ?? "";
  return subjectAltNames(san)
    .filter(([type]) => type === "URI")
    .map(([, value]) => value);
}

/**
 * Node's `subjectAltName` text, `URI:spiffe://td/ns/a/sa/b, DNS:x`, as [type, value] pairs. Node
 * writes a value holding a comma or a quote as a JSON string. (Node's parser is used because
 * @peculiar/x509 needs a reflect-metadata polyfill this package does not ship.)
 */
export function subjectAltNames(text: string): [string, string][] {
  const out: [string, string][] = [];
  let i = 0;
  while (i < text.length) {
    const colon = text.indexOf(":", i);
    if (colon === -1) break;
    const type = text.slice(i, colon);
    let value: string;
    let end: number;
    if (text[colon + 1] === '"') {
      end = colon + 2;
      while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      value = JSON.parse(text.slice(colon + 1, end + 1)) as string;
      end++;
    } else {
      end = text.indexOf(", ", colon);
      if (end === -1) end = text.length;
      value = text.slice(colon + 1, end);
    }
    out.push([type, value]);
    i = end + 2;
  }
  return out;
}
