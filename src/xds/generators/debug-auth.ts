// Who may read debug information over xDS (Istio's debuggen.go and statusgen.go): only callers with
// a verified identity (the TLS port), and callers outside the system namespace only a few
// endpoints, about proxies of their own namespace.
import { status } from "@grpc/grpc-js";
import type { ProxyNode } from "../../model/index.ts";
import { XdsError } from "../errors.ts";
import { parseSpiffeId } from "../server/auth.ts";

export interface DebugAuthOptions {
  /** The mesh root namespace (istio-system): its callers see everything. */
  systemNamespace: string;
  /** More namespaces with full access (DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES). */
  allowedNamespaces?: readonly string[];
  /** ENABLE_DEBUG_ENDPOINT_AUTH (default true); off, the status generator serves anyone. */
  enabled?: boolean;
}

/** What callers outside the system namespace may ask for (Istio's activeNamespaceDebuggers). */
export const NAMESPACE_DEBUGGERS: ReadonlySet<string> = new Set(["config_dump", "ndsz", "edsz"]);

/** The namespace of the caller's verified SPIFFE identity, or undefined when it has none. */
export function verifiedNamespace(proxy: ProxyNode): string | undefined {
  for (const id of proxy.verifiedIdentities ?? []) {
    const spiffe = parseSpiffeId(id);
    if (spiffe) return spiffe.namespace;
  }
  return undefined;
}

/**
 * The caller's verified namespace, or Unauthenticated with istiod's message (callers without a
 * verified identity are those on the plaintext port, or on the TLS port without a certificate).
 */
export function requireVerifiedCaller(proxy: ProxyNode): string {
  const namespace = verifiedNamespace(proxy);
  if (namespace === undefined) throw new XdsError(status.UNAUTHENTICATED, "authentication required");
  return namespace;
}

/** The namespace a caller is limited to, or undefined when it sees every proxy. */
export function restrictedNamespace(namespace: string, options: DebugAuthOptions): string | undefined {
  if (namespace === options.systemNamespace || options.allowedNamespaces?.includes(namespace)) return undefined;
  return namespace;
}

/** PermissionDenied unless the caller may use `endpoint`. */
export function checkDebugEndpoint(endpoint: string, restrictedTo: string | undefined): void {
  if (restrictedTo !== undefined && !NAMESPACE_DEBUGGERS.has(endpoint)) {
    throw new XdsError(
      status.PERMISSION_DENIED,
      `the debug info is not available for callers in namespace ${JSON.stringify(restrictedTo)}: ${endpoint}`,
    );
  }
}
