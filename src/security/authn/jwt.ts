// Istio's JwtAuthenticator (security/pkg/server/ca/authenticate/oidc.go, "IDTokenAuthenticator"): a
// bearer token signed by the issuer of `JWT_RULE`, verified as go-oidc verifies ID tokens, whose
// `sub` is a Kubernetes service account (`system:serviceaccount:<ns>:<sa>`) and whose `aud` meets
// the rule's audiences. The identity is that account's SPIFFE id in the mesh's trust domain.
import { compactVerify, createRemoteJWKSet, errors, type JWTVerifyGetKey } from "jose";
import { spiffeIdentity } from "../../registry/index.ts";
import { type AuthContext, type Authenticator, bearerToken, type Caller } from "./authenticator.ts";

/** The fields of `JWT_RULE` (Istio's security.v1beta1.JWTRule as Go's encoding/json reads it) that matter here. */
export interface JwtRule {
  issuer: string;
  /** Without it the keys come from OIDC discovery at the issuer. */
  jwksUri?: string;
  audiences: string[];
}

/** Parses `JWT_RULE`, e.g. `{"issuer": "foo", "jwks_uri": "baz", "audiences": ["aud1", "aud2"]}`. */
export function parseJwtRule(json: string): JwtRule | Error {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    return new Error(`failed to unmarshal JWT rule: ${(err as Error).message}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return new Error("failed to unmarshal JWT rule: not an object");
  }
  const { issuer = "", jwks_uri: jwksUri = "", audiences = [] } = raw as Record<string, unknown>;
  if (typeof issuer !== "string" || typeof jwksUri !== "string") {
    return new Error("failed to unmarshal JWT rule: issuer and jwks_uri must be strings");
  }
  if (!Array.isArray(audiences) || !audiences.every((a) => typeof a === "string")) {
    return new Error("failed to unmarshal JWT rule: audiences must be a list of strings");
  }
  return { issuer, jwksUri: jwksUri === "" ? undefined : jwksUri, audiences: audiences as string[] };
}

/** The algorithms go-oidc can verify; a provider's discovery document is filtered to these. */
const GO_OIDC_ALGORITHMS = new Set([
  "RS256",
  "RS384",
  "RS512",
  "ES256",
  "ES384",
  "ES512",
  "PS256",
  "PS384",
  "PS512",
  "EdDSA",
]);

/** go-oidc tolerates a `nbf` this far in the future (clock skew). */
const NOT_BEFORE_LEEWAY_MS = 60_000;

export interface JwtAuthenticatorOptions {
  issuer: string;
  /** The key set to verify signatures with (createRemoteJWKSet over the rule's or the discovered jwks_uri). */
  keys: JWTVerifyGetKey;
  /** Accepted `alg` values: go-oidc's default RS256, or what the provider's discovery document lists. */
  algorithms: string[];
  audiences: readonly string[];
  trustDomain: string;
}

export class JwtAuthenticator implements Authenticator {
  readonly name = "IDTokenAuthenticator";

  constructor(private readonly options: JwtAuthenticatorOptions) {}

  async authenticate(ctx: AuthContext): Promise<Caller | Error> {
    const token = bearerToken(ctx);
    if (token instanceof Error) {
      const what = ctx.transport === "grpc" ? "ID token" : "target JWT";
      return new Error(`${what} extraction error: ${token.message}`);
    }
    const claims = await this.verify(token);
    if (claims instanceof Error) return new Error(`failed to verify the JWT token (error ${claims.message})`);
    // Istio decodes the claims into {aud []string, exp int, iss string, sub string}: other shapes fail.
    const { aud = null, sub = "" } = claims;
    if (typeof sub !== "string" || (aud !== null && !(Array.isArray(aud) && aud.every((a) => typeof a === "string")))) {
      return new Error("failed to extract claims from ID token");
    }
    const parts = sub.split(":");
    // Istio would make an id with an empty namespace or account of such a sub; it is refused here.
    if (!sub.startsWith("system:serviceaccount") || parts.length < 4 || parts[2] === "" || parts[3] === "") {
      return new Error(`invalid sub ${sub}`);
    }
    const audiences: string[] = aud ?? [];
    if (!audiences.some((a) => this.options.audiences.includes(a))) {
      return new Error(`invalid audiences [${audiences.join(" ")}]`);
    }
    return {
      identities: [spiffeIdentity(this.options.trustDomain, parts[2], parts[3])],
      authenticator: this.name,
    };
  }

  /** go-oidc's IDTokenVerifier.Verify: claims first (cheap), then the signature. Messages hold no token. */
  private async verify(token: string): Promise<Record<string, unknown> | Error> {
    const parts = token.split(".");
    if (parts.length !== 3) return new Error("oidc: malformed jwt");
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    } catch {
      return new Error("oidc: malformed jwt payload");
    }
    if (typeof claims !== "object" || claims === null || Array.isArray(claims)) {
      return new Error("oidc: failed to unmarshal claims");
    }
    const { iss, exp, nbf } = claims as Record<string, unknown>;
    if (iss !== this.options.issuer) {
      return new Error(`oidc: id token issued by a different provider, expected "${this.options.issuer}"`);
    }
    const now = Date.now();
    // A token without exp counts as expired at the epoch, as go-oidc's zero time.
    if (typeof exp !== "number" || exp * 1000 < now) return new Error("oidc: token is expired");
    if (typeof nbf === "number" && now + NOT_BEFORE_LEEWAY_MS < nbf * 1000) {
      return new Error("oidc: current time before the nbf (not before) time");
    }
    try {
      await compactVerify(token, this.options.keys, { algorithms: this.options.algorithms });
    } catch (err) {
      // jose's messages name the failed check only; other errors are reported by kind.
      return new Error(
        err instanceof errors.JOSEError ? `failed to verify signature: ${err.message}` : "failed to verify signature",
      );
    }
    return claims as Record<string, unknown>;
  }
}

/**
 * The JWT_RULE authenticator as istiod builds it: keys from `jwks_uri` (RS256), or OIDC discovery at
 * `<issuer>/.well-known/openid-configuration` (its jwks_uri and algorithms). Discovery failing is an
 * Error, which makes istiod refuse to start.
 */
export async function createJwtAuthenticator(rule: JwtRule, trustDomain: string): Promise<JwtAuthenticator | Error> {
  let jwksUri = rule.jwksUri;
  let algorithms = ["RS256"];
  if (jwksUri === undefined) {
    const discovered = await discoverProvider(rule.issuer);
    if (discovered instanceof Error) {
      return new Error(`failed at creating an OIDC provider for ${rule.issuer}: ${discovered.message}`);
    }
    jwksUri = discovered.jwksUri;
    if (discovered.algorithms.length > 0) algorithms = discovered.algorithms;
  }
  let url: URL;
  try {
    url = new URL(jwksUri);
  } catch {
    return new Error(`invalid jwks_uri ${jwksUri}`);
  }
  return new JwtAuthenticator({
    issuer: rule.issuer,
    keys: createRemoteJWKSet(url),
    algorithms,
    audiences: rule.audiences,
    trustDomain,
  });
}

/** go-oidc's NewProvider: the discovery document must name the same issuer. */
async function discoverProvider(issuer: string): Promise<{ jwksUri: string; algorithms: string[] } | Error> {
  const wellKnown = `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`;
  let doc: unknown;
  try {
    const response = await fetch(wellKnown, { signal: AbortSignal.timeout(30_000) });
    if (response.status !== 200) return new Error(`${response.status} ${response.statusText}`);
    doc = await response.json();
  } catch (err) {
    return new Error(`oidc: failed to get the discovery document: ${(err as Error).message}`);
  }
  if (typeof doc !== "object" || doc === null) return new Error("oidc: failed to decode provider discovery object");
  const {
    issuer: docIssuer,
    jwks_uri: jwksUri,
    id_token_signing_alg_values_supported: algs,
  } = doc as Record<string, unknown>;
  if (docIssuer !== issuer) {
    return new Error(
      `oidc: issuer did not match the issuer returned by provider, expected "${issuer}" got "${docIssuer}"`,
    );
  }
  if (typeof jwksUri !== "string") return new Error("oidc: the discovery document has no jwks_uri");
  const algorithms = Array.isArray(algs)
    ? algs.filter((a): a is string => typeof a === "string" && GO_OIDC_ALGORITHMS.has(a))
    : [];
  return { jwksUri, algorithms };
}
