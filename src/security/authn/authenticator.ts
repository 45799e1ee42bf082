// Who is calling (Istio's security.Authenticator and security.Authenticate, pkg/security): one
// interface over gRPC calls and HTTP requests, and the chain that tries authenticators in order.
// The ADS server on 15012, the CA and the admin debug endpoints share one chain.
import type { Logger } from "pino";

/** Istio's TOKEN_AUDIENCES default: the audiences a TokenReview accepts. */
export const DEFAULT_TOKEN_AUDIENCES: readonly string[] = ["istio-ca"];

/** What an authenticator sees of a call, independent of gRPC or HTTP. */
export interface AuthContext {
  /** gRPC calls and HTTP requests read bearer tokens differently (Istio's ExtractBearerToken / ExtractRequestToken). */
  transport: "grpc" | "http";
  /** The client certificate (DER), present only when TLS verified it against the trusted roots. */
  verifiedPeerCertificate?: Uint8Array;
  /** A request header or gRPC metadata value (lower-case name). */
  header(name: string): string | undefined;
  /** `ip:port` of the caller (`[ip]:port` or `ip:port` for IPv6). */
  remoteAddress: string;
}

/** The pod behind a Kubernetes token, from the TokenReview (Istio's KubernetesInfo). */
export interface KubernetesInfo {
  podName: string;
  podNamespace: string;
  podUid: string;
  podServiceAccount: string;
}

export interface Caller {
  /** SPIFFE ids (or other SAN URIs) of the caller. */
  identities: string[];
  /** Which authenticator accepted the call. */
  authenticator: string;
  /** Set by the Kubernetes token authenticator. */
  kubernetesInfo?: KubernetesInfo;
}

export interface Authenticator {
  readonly name: string;
  /**
   * The caller's identities, or an Error saying why this authenticator cannot vouch for the call.
   * The message is logged: it must never hold a token, a key or a response body that echoes one.
   */
  authenticate(ctx: AuthContext): Caller | Error | Promise<Caller | Error>;
}

/** No authenticator vouched for the call. The message is all a caller may see; `reasons` are for the log. */
export class AuthenticationFailure extends Error {
  constructor(readonly reasons: readonly string[]) {
    super("authentication failure");
  }
}

/**
 * Tries each authenticator in order; the first that returns identities wins (Istio's order matters).
 * A failure's reasons go to `log` at debug level; an authenticator that throws counts as failing.
 */
export async function authenticate(
  chain: readonly Authenticator[],
  ctx: AuthContext,
  log?: Logger,
): Promise<Caller | AuthenticationFailure> {
  const reasons: string[] = [];
  for (const a of chain) {
    let result: Caller | Error;
    try {
      result = await a.authenticate(ctx);
    } catch (err) {
      // Only the kind: a thrown error's text is not known to be free of secrets.
      result = new Error(`failed unexpectedly (${err instanceof Error ? err.name : typeof err})`);
    }
    if (result instanceof Error) reasons.push(`${a.name}: ${result.message}`);
    else if (result.identities.length > 0) {
      log?.debug({ remoteAddress: ctx.remoteAddress, authenticator: a.name }, "authentication succeeded");
      return result;
    } else reasons.push(`${a.name}: no identities`);
  }
  log?.debug({ remoteAddress: ctx.remoteAddress, reasons }, "authentication failed");
  return new AuthenticationFailure(reasons);
}

/**
 * The bearer token of a call: gRPC takes `authorization: Bearer <token>`; HTTP also takes Istio's
 * `Istio <token>` form. An Error (without the header's value) when there is none.
 */
export function bearerToken(ctx: AuthContext): string | Error {
  const value = ctx.header("authorization");
  if (value === undefined || value === "") return new Error("no HTTP authorization header exists");
  if (value.startsWith("Bearer ")) return value.slice("Bearer ".length);
  if (ctx.transport === "http" && value.startsWith("Istio ")) return value.slice("Istio ".length);
  return new Error("no bearer token exists in HTTP authorization header");
}
