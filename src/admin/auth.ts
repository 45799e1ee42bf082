// Who may call the debug endpoints over HTTP (Istio's allowAuthenticatedOrLocalhost and
// AuthorizeDebugRequest, pilot/pkg/xds/debug.go): loopback callers pass unrestricted; others must
// pass the authenticator chain (401 otherwise), then, with debug endpoint auth on, callers outside
// the system namespace get only config_dump, ndsz and edsz for their own proxies (403 otherwise).
import { isIPv6 } from "node:net";
import { isLoopback } from "../security/authn/index.ts";
import {
  type Authenticator,
  authenticate,
  type DebugAuthOptions,
  NAMESPACE_DEBUGGERS,
  parseSpiffeId,
  restrictedNamespace,
} from "../xds/index.ts";

export { isLoopback };

/** What the check reads of an HTTP request. */
export interface DebugCall {
  /** The remote IP as the socket reports it. */
  remoteIp: string;
  remotePort: number;
  /** The endpoint name: the path after /debug/. */
  endpoint: string;
  header(name: string): string | undefined;
  /** The client certificate (DER), when a TLS server verified one. */
  verifiedPeerCertificate?: Uint8Array;
}

export type DebugAccess =
  /** `callerNamespace` set: the caller sees only proxies of that namespace. */
  { allowed: true; callerNamespace?: string } | { allowed: false; status: 401 | 403; reason: string };

export async function authorizeDebugCall(
  call: DebugCall,
  authenticators: readonly Authenticator[],
  auth: DebugAuthOptions,
  isLocal: (ip: string) => boolean = isLoopback,
): Promise<DebugAccess> {
  if (isLocal(call.remoteIp)) return { allowed: true };
  const caller = await authenticate(authenticators, {
    transport: "http",
    header: call.header,
    remoteAddress: isIPv6(call.remoteIp)
      ? `[${call.remoteIp}]:${call.remotePort}`
      : `${call.remoteIp}:${call.remotePort}`,
    verifiedPeerCertificate: call.verifiedPeerCertificate,
  });
  if (caller instanceof Error) return { allowed: false, status: 401, reason: caller.reasons.join("; ") };
  if (!(auth.enabled ?? true)) return { allowed: true };
  const namespace = caller.identities.map(parseSpiffeId).find((id) => id !== undefined)?.namespace;
  if (namespace === undefined) {
    return { allowed: false, status: 403, reason: `no SPIFFE identity among ${caller.identities.join(", ")}` };
  }
  const restrictedTo = restrictedNamespace(namespace, auth);
  if (restrictedTo !== undefined && !NAMESPACE_DEBUGGERS.has(call.endpoint)) {
    return { allowed: false, status: 403, reason: `namespace ${namespace} may not use ${call.endpoint}` };
  }
  return restrictedTo === undefined ? { allowed: true } : { allowed: true, callerNamespace: restrictedTo };
}
