// The authenticator chain as istiod builds it (pilot/pkg/bootstrap/server.go): client certificate,
// then JWT_RULE's issuer, then Kubernetes TokenReview when there is a cluster, then XFCC when
// TRUSTED_GATEWAY_CIDR is set. Order matters: the first that proves an identity wins.
import { type Authenticator, DEFAULT_TOKEN_AUDIENCES } from "./authenticator.ts";
import { ClientCertAuthenticator } from "./client-cert.ts";
import { createJwtAuthenticator, parseJwtRule } from "./jwt.ts";
import type { KubeJwtAuthenticatorOptions } from "./kube.ts";
import { parseTrustedGatewayCidrs, XfccAuthenticator } from "./xfcc.ts";

export interface AuthenticatorSettings {
  /** The mesh's trust domain, for identities made from service accounts. */
  trustDomain: string;
  /** JWT_RULE (JSON). */
  jwtRule?: string;
  /** With a cluster: the TokenReview authenticator. */
  kube?: Omit<KubeJwtAuthenticatorOptions, "trustDomain" | "audiences">;
  /** TOKEN_AUDIENCES. */
  tokenAudiences?: readonly string[];
  /** TRUSTED_GATEWAY_CIDR, split. */
  trustedGatewayCidrs?: readonly string[];
}

/** The settings istiod reads from its environment. */
export function authenticatorEnv(
  env: Readonly<Record<string, string | undefined>>,
): Pick<AuthenticatorSettings, "jwtRule" | "tokenAudiences" | "trustedGatewayCidrs"> {
  return {
    jwtRule: env.JWT_RULE || undefined,
    tokenAudiences: env.TOKEN_AUDIENCES ? env.TOKEN_AUDIENCES.split(",") : DEFAULT_TOKEN_AUDIENCES,
    trustedGatewayCidrs: parseTrustedGatewayCidrs(env.TRUSTED_GATEWAY_CIDR),
  };
}

/** The chain, or an Error when JWT_RULE is malformed or its issuer's discovery fails (istiod then does not start). */
export async function buildAuthenticators(settings: AuthenticatorSettings): Promise<Authenticator[] | Error> {
  const chain: Authenticator[] = [new ClientCertAuthenticator()];
  if (settings.jwtRule) {
    const rule = parseJwtRule(settings.jwtRule);
    if (rule instanceof Error) return new Error(`error initializing OIDC: ${rule.message}`);
    const jwt = await createJwtAuthenticator(rule, settings.trustDomain);
    if (jwt instanceof Error)
      return new Error(`error initializing OIDC: failed to create the JWT authenticator: ${jwt.message}`);
    chain.push(jwt);
  }
  if (settings.kube) {
    // Loaded only with a cluster: the Kubernetes client takes a large share of sluiced's start.
    const { KubeJwtAuthenticator } = await import("./kube.ts");
    chain.push(
      new KubeJwtAuthenticator({
        ...settings.kube,
        trustDomain: settings.trustDomain,
        audiences: settings.tokenAudiences,
      }),
    );
  }
  if (settings.trustedGatewayCidrs && settings.trustedGatewayCidrs.length > 0) {
    chain.push(new XfccAuthenticator(settings.trustedGatewayCidrs));
  }
  return chain;
}
