// Istio's KubeJWTAuthenticator (security/pkg/server/ca/authenticate/kubeauth/kube_jwt.go and
// security/pkg/k8s/tokenreview): the bearer token is a Kubernetes service account token, and the API
// server says whose with a TokenReview bound to the CA's audiences. The identity is the account's
// SPIFFE id; the pod the token was issued for is kept for node authorization.
import { ApiException, AuthenticationV1Api, type KubeConfig, type V1TokenReview } from "@kubernetes/client-node";
import { spiffeIdentity } from "../../registry/index.ts";
import {
  type AuthContext,
  type Authenticator,
  bearerToken,
  type Caller,
  DEFAULT_TOKEN_AUDIENCES,
  type KubernetesInfo,
} from "./authenticator.ts";

export interface KubeJwtAuthenticatorOptions {
  /** The cluster this control plane runs in. */
  kubeConfig: KubeConfig;
  /** Its cluster id: a caller naming another cluster (`clusterid` metadata) is refused, as no remote clusters are known. */
  clusterId: string;
  /** Other names of the local cluster (`--clusterAliases`: alias → cluster id). */
  clusterAliases?: Readonly<Record<string, string>>;
  trustDomain: string;
  /** TOKEN_AUDIENCES; default `istio-ca`. */
  audiences?: readonly string[];
}

export class KubeJwtAuthenticator implements Authenticator {
  readonly name = "KubeJWTAuthenticator";
  readonly #api: AuthenticationV1Api;

  constructor(private readonly options: KubeJwtAuthenticatorOptions) {
    this.#api = options.kubeConfig.makeApiClient(AuthenticationV1Api);
  }

  async authenticate(ctx: AuthContext): Promise<Caller | Error> {
    const token = bearerToken(ctx);
    if (token instanceof Error) return new Error(`target JWT extraction error: ${token.message}`);
    const clusterId = ctx.header("clusterid") ?? "";
    const { clusterId: local, clusterAliases = {} } = this.options;
    if (clusterId !== "" && clusterId !== local && clusterAliases[clusterId] !== local) {
      return new Error(
        `client claims to be in cluster "${clusterId}", but we only know about local cluster "${local}" and remote clusters []`,
      );
    }
    const info = await this.review(token);
    if (info instanceof Error)
      return new Error(`failed to validate the JWT from cluster "${clusterId}": ${info.message}`);
    if (info.podServiceAccount === "") return new Error("failed to parse the JWT; service account required");
    if (info.podNamespace === "") return new Error("failed to parse the JWT; namespace required");
    return {
      identities: [spiffeIdentity(this.options.trustDomain, info.podNamespace, info.podServiceAccount)],
      authenticator: this.name,
      kubernetesInfo: info,
    };
  }

  /** Istio's ValidateK8sJwt. Errors never carry the response: a TokenReview echoes the token back. */
  private async review(token: string): Promise<KubernetesInfo | Error> {
    let review: V1TokenReview;
    try {
      review = await this.#api.createTokenReview({
        body: {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenReview",
          spec: { token, audiences: [...(this.options.audiences ?? DEFAULT_TOKEN_AUDIENCES)] },
        },
      });
    } catch (err) {
      // An ApiException's message holds the response body; transport errors name only the URL.
      if (err instanceof ApiException) return new Error(`TokenReview answered HTTP ${err.code}`);
      return new Error(`TokenReview failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    return tokenReviewResult(review);
  }
}

const POD_NAME_KEY = "authentication.kubernetes.io/pod-name";
const POD_UID_KEY = "authentication.kubernetes.io/pod-uid";

/** Istio's getTokenReviewResult: an authenticated service account `system:serviceaccount:<ns>:<sa>`. */
export function tokenReviewResult(review: V1TokenReview): KubernetesInfo | Error {
  const status = review.status;
  if (status?.error) return new Error(`the service account authentication returns an error: ${status.error}`);
  if (!status?.authenticated) return new Error("the token is not authenticated");
  const user = status.user ?? {};
  if (!(user.groups ?? []).includes("system:serviceaccounts")) return new Error("the token is not a service account");
  const parts = (user.username ?? "").split(":");
  if (parts.length !== 4) return new Error("invalid username field in the token review result");
  const extra = (key: string) => user.extra?.[key]?.[0] ?? "";
  return {
    podName: extra(POD_NAME_KEY),
    podNamespace: parts[2],
    podUid: extra(POD_UID_KEY),
    podServiceAccount: parts[3],
  };
}
