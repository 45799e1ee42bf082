// Authentication of callers (Istio's security.Authenticator chain): client certificates, OIDC JWTs,
// Kubernetes TokenReview and XFCC from trusted gateways, over gRPC calls and HTTP requests alike.
export { isLoopback } from "./address.ts";
export {
  type AuthContext,
  AuthenticationFailure,
  type Authenticator,
  authenticate,
  bearerToken,
  type Caller,
  DEFAULT_TOKEN_AUDIENCES,
  type KubernetesInfo,
} from "./authenticator.ts";
export { type AuthenticatorSettings, authenticatorEnv, buildAuthenticators } from "./chain.ts";
export { ClientCertAuthenticator, subjectAltNames } from "./client-cert.ts";
export { httpAuthContext, verifiedPeerCertificate } from "./http.ts";
export {
  createJwtAuthenticator,
  JwtAuthenticator,
  type JwtAuthenticatorOptions,
  type JwtRule,
  parseJwtRule,
} from "./jwt.ts";
// Not the TokenReview authenticator: import it from "./kube.ts", where it brings in the Kubernetes client.
export type { KubeJwtAuthenticatorOptions } from "./kube.ts";
export { parseSpiffeId, type SpiffeId } from "./spiffe.ts";
export { parseTrustedGatewayCidrs, parseXfcc, XFCC_HEADER, XfccAuthenticator, type XfccCert } from "./xfcc.ts";
