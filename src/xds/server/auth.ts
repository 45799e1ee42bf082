// Who is calling: the authenticator chain of the secure xDS port (Istio's security.Authenticate,
// pkg/security/authentication.go) and the identity check that ties a caller to the proxy it claims
// to be (pilot/pkg/xds/auth.go). The plaintext port skips both, as in Istio.
import { X509Certificate } from "node:crypto";
import type { ProxyNode } from "../../model/proxy.ts";

/** What an authenticator sees of a call, independent of gRPC or HTTP. */
export interface AuthContext {
  /** The client certificate (DER), present only when TLS verified it against the trusted roots. */
  verifiedPeerCertificate?: Uint8Array;
  /** A request header or gRPC metadata value (lower-case name). */
  header(name: string): string | undefined;
  /** `ip:port` of the caller. */
  remoteAddress: string;
}

export interface Caller {
  /** SPIFFE ids (or other SAN URIs) of the caller. */
  identities: string[];
  /** Which authenticator accepted the call. */
  authenticator: string;
}

export interface Authenticator {
  readonly name: string;
  /** The caller's identities, or an Error saying why this authenticator cannot vouch for the call. */
  authenticate(ctx: AuthContext): Caller | Error | Promise<Caller | Error>;
}

/** Tries each authenticator in order; the first that returns identities wins (Istio's order matters). */
export async function authenticate(chain: readonly Authenticator[], ctx: AuthContext): Promise<Caller | Error> {
  const reasons: string[] = [];
  for (const a of chain) {
    const result = await a.authenticate(ctx);
    if (result instanceof Error) reasons.push(`${a.name}: ${result.message}`);
    else if (result.identities.length > 0) return result;
    else reasons.push(`${a.name}: no identities`);
  }
  return new Error(`authentication failure${reasons.length ? ` (${reasons.join("; ")})` : ""}`);
}

/** Identities from the URI SANs of a verified client certificate (Istio's ClientCertAuthenticator). */
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

export interface SpiffeId {
  trustDomain: string;
  namespace: string;
  serviceAccount: string;
}

/** `spiffe://<trust domain>/ns/<namespace>/sa/<service account>`, or undefined. */
export function parseSpiffeId(uri: string): SpiffeId | undefined {
  const m = /^spiffe:\/\/([^/]+)\/ns\/([^/]+)\/sa\/([^/]+)$/.exec(uri);
  return m ? { trustDomain: m[1], namespace: m[2], serviceAccount: m[3] } : undefined;
}

/**
 * Istio's connection identity check: some identity must be a SPIFFE id of the proxy's config
 * namespace and, when the proxy names one, its service account. Returns the matching id or an Error.
 */
export function checkConnectionIdentity(proxy: ProxyNode, identities: readonly string[]): SpiffeId | Error {
  const serviceAccount = proxy.metadata.SERVICE_ACCOUNT ?? "";
  for (const raw of identities) {
    const id = parseSpiffeId(raw);
    if (!id) continue;
    if (proxy.configNamespace !== "" && id.namespace !== proxy.configNamespace) continue;
    if (serviceAccount !== "" && id.serviceAccount !== serviceAccount) continue;
    return id;
  }
  return new Error(`no identities (${identities.join(", ")}) matched ${proxy.configNamespace}/${serviceAccount}`);
}
