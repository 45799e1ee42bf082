// The identity check that ties a caller to the proxy it claims to be (pilot/pkg/xds/auth.go). The
// authenticator chain itself lives in security/authn; the plaintext port skips both, as in Istio.
import type { ProxyNode } from "../../model/index.ts";
import { parseSpiffeId, type SpiffeId } from "../../security/authn/index.ts";

export {
  type AuthContext,
  type Authenticator,
  authenticate,
  type Caller,
  ClientCertAuthenticator,
  parseSpiffeId,
  type SpiffeId,
} from "../../security/authn/index.ts";

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
