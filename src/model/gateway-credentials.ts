// The SDS resources a gateway proxy may fetch for its Gateways' TLS servers (Istio's
// VerifiedCertificateReferences in mergeGateways): only when the proxy proved its identity, the
// identity's namespace is the Gateway's (and its service account the one a translated Gateway
// names), and the Secret is in that same namespace. Cross-namespace grants are not considered.
import type { Gateway, GatewayServers } from "../config/types/index.ts";
import { namespaceOf } from "./config-meta.ts";
import { PARENT_NAMESPACE_ANNOTATION } from "./gateway-select.ts";

const SERVICE_ACCOUNT_ANNOTATION = "internal.istio.io/service-account-name";
const KUBERNETES = "kubernetes://";
const KUBERNETES_GATEWAY = "kubernetes-gateway://";
const BUILTIN = "builtin://";
/** Suffix of the resource holding a credential's CA certificate (Istio's SdsCaSuffix). */
export const CA_SUFFIX = "-cacert";

interface Identity {
  namespace: string;
  serviceAccount: string;
}

/** `spiffe://<trust domain>/ns/<ns>/sa/<sa>` read into its namespace and service account. */
function parseSpiffeIdentity(uri: string): Identity | undefined {
  const match = /^spiffe:\/\/[^/]+\/ns\/([^/]+)\/sa\/([^/]+)$/.exec(uri);
  return match ? { namespace: match[1], serviceAccount: match[2] } : undefined;
}

/** A credential name as an SDS resource name: `kubernetes://` unless it names its own scheme. */
export function credentialResourceName(name: string): string {
  if (name.startsWith(BUILTIN) || name.startsWith("file-root:") || name.startsWith("file-cert:")) return name;
  if (name.startsWith(KUBERNETES) || name.startsWith(KUBERNETES_GATEWAY)) return name;
  return `${KUBERNETES}${name}`;
}

/** The namespace of a kubernetes(-gateway):// resource (default: `defaultNamespace`), or undefined when unparsable. */
function resourceNamespace(resource: string, defaultNamespace: string): string | undefined {
  const scheme = resource.startsWith(KUBERNETES)
    ? KUBERNETES
    : resource.startsWith(KUBERNETES_GATEWAY)
      ? KUBERNETES_GATEWAY
      : "";
  if (scheme === "") return undefined;
  const parts = resource.slice(scheme.length).split("/");
  if (parts.length === 1 && scheme === KUBERNETES && parts[0] !== "") return defaultNamespace;
  if (parts.length === 2 && parts[0] !== "" && parts[1] !== "") return parts[0];
  return undefined;
}

/** The resources `identities` (the proxy's verified SPIFFE identities) allow for the servers of `gateways`. */
export function verifiedCredentials(gateways: readonly Gateway[], identities: readonly string[]): Set<string> {
  const allowed = new Set<string>();
  const identity = identities.map(parseSpiffeIdentity).find((i) => i !== undefined);
  if (!identity) return allowed;
  for (const gateway of gateways) {
    const annotations = gateway.metadata.annotations ?? {};
    const expectedNamespace = annotations[PARENT_NAMESPACE_ANNOTATION] || namespaceOf(gateway);
    const expectedAccount = annotations[SERVICE_ACCOUNT_ANNOTATION] ?? "";
    if (identity.namespace !== expectedNamespace) continue;
    if (expectedAccount !== "" && identity.serviceAccount !== expectedAccount) continue;
    if (namespaceOf(gateway) !== identity.namespace) continue;
    for (const server of gateway.spec?.servers ?? []) addServerCredentials(server, identity.namespace, allowed);
  }
  return allowed;
}

function addServerCredentials(server: GatewayServers, namespace: string, allowed: Set<string>): void {
  const tls = server.tls;
  if (!tls) return;
  const names = tls.credentialNames?.length ? tls.credentialNames : [tls.credentialName ?? ""];
  const mutual = tls.mode === "MUTUAL" || tls.mode === "OPTIONAL_MUTUAL";
  for (const name of names) {
    if (name === "" || name.startsWith(BUILTIN)) continue;
    const resource = credentialResourceName(name);
    if (resourceNamespace(resource, namespace) !== namespace) continue;
    allowed.add(resource);
    if (mutual) allowed.add(`${resource}${CA_SUFFIX}`);
  }
  const ca = tls.caCertCredentialName ?? "";
  if (ca.startsWith(KUBERNETES_GATEWAY) && resourceNamespace(ca, namespace) === namespace) allowed.add(ca);
}
