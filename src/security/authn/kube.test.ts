// The TokenReview authenticator against a fake API server on 127.0.0.1 that answers TokenReviews as
// Kubernetes does (the response echoes the reviewed token back).
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import fastify, { type FastifyInstance } from "fastify";
import type { AuthContext } from "./authenticator.ts";
import { KubeJwtAuthenticator, tokenReviewResult } from "./kube.ts";

interface ReviewRequest {
  apiVersion: string;
  kind: string;
  spec: { token: string; audiences?: string[] };
}

/** What the fake API server knows of each token. */
const TOKENS: Record<string, { username: string; groups: string[]; audiences: string[]; pod?: [string, string] }> = {
  "app-token": {
    username: "system:serviceaccount:default:app",
    groups: ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
    audiences: ["istio-ca"],
    pod: ["app-7d9c", "0f6c2e1a-uid"],
  },
  "kube-audience-token": {
    username: "system:serviceaccount:default:app",
    groups: ["system:serviceaccounts"],
    audiences: ["https://kubernetes.default.svc"],
  },
  "user-token": { username: "alice", groups: ["system:authenticated"], audiences: ["istio-ca"] },
};

let api: FastifyInstance;
let kubeConfig: KubeConfig;
const reviews: ReviewRequest[] = [];

before(async () => {
  api = fastify();
  api.post("/apis/authentication.k8s.io/v1/tokenreviews", async (req, reply) => {
    const review = req.body as ReviewRequest;
    reviews.push(review);
    if (review.spec.token === "crash-token") return reply.code(500).send({ message: `failed on ${review.spec.token}` });
    const known = TOKENS[review.spec.token];
    const wanted = review.spec.audiences ?? [];
    const status = !known
      ? {
          authenticated: false,
          error: "[invalid bearer token, square/go-jose: compact JWS format must have three parts]",
        }
      : !known.audiences.some((a) => wanted.includes(a))
        ? {
            authenticated: false,
            error: `[invalid bearer token, token audiences ${JSON.stringify(known.audiences)} is invalid for the target audiences ${JSON.stringify(wanted)}]`,
          }
        : {
            authenticated: true,
            audiences: wanted,
            user: {
              username: known.username,
              groups: known.groups,
              extra: known.pod
                ? {
                    "authentication.kubernetes.io/pod-name": [known.pod[0]],
                    "authentication.kubernetes.io/pod-uid": [known.pod[1]],
                  }
                : undefined,
            },
          };
    return reply
      .code(201)
      .send({ apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: review.spec, status });
  });
  await api.listen({ host: "127.0.0.1", port: 0 });
  kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [
      { name: "test", server: `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`, skipTLSVerify: true },
    ],
    users: [{ name: "test" }],
    contexts: [{ name: "test", cluster: "test", user: "test" }],
    currentContext: "test",
  });
});

after(() => api.close());

function call(token: string | undefined, clusterId?: string): AuthContext {
  const headers: Record<string, string | undefined> = {
    authorization: token === undefined ? undefined : `Bearer ${token}`,
    clusterid: clusterId,
  };
  return { transport: "grpc", header: (name) => headers[name], remoteAddress: "10.0.0.1:5" };
}

const authenticator = () =>
  new KubeJwtAuthenticator({
    kubeConfig,
    clusterId: "Kubernetes",
    clusterAliases: { "old-name": "Kubernetes" },
    trustDomain: "cluster.local",
  });

test("a service account token bound to istio-ca: its SPIFFE id and pod", async () => {
  reviews.length = 0;
  assert.deepEqual(await authenticator().authenticate(call("app-token")), {
    identities: ["spiffe://cluster.local/ns/default/sa/app"],
    authenticator: "KubeJWTAuthenticator",
    kubernetesInfo: { podName: "app-7d9c", podNamespace: "default", podUid: "0f6c2e1a-uid", podServiceAccount: "app" },
  });
  assert.deepEqual(reviews, [
    {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenReview",
      spec: { token: "app-token", audiences: ["istio-ca"] },
    },
  ]);
});

test("a token the API server does not authenticate", async () => {
  const result = await authenticator().authenticate(call("forged"));
  assert.ok(result instanceof Error);
  assert.equal(
    result.message,
    'failed to validate the JWT from cluster "": the service account authentication returns an error: [invalid bearer token, square/go-jose: compact JWS format must have three parts]',
  );
});

test("a token for another audience (the API server's own)", async () => {
  const result = await authenticator().authenticate(call("kube-audience-token"));
  assert.ok(result instanceof Error);
  assert.match(result.message, /token audiences \["https:\/\/kubernetes.default.svc"\] is invalid/);
});

test("TOKEN_AUDIENCES replaces istio-ca", async () => {
  const auth = new KubeJwtAuthenticator({
    kubeConfig,
    clusterId: "Kubernetes",
    trustDomain: "td",
    audiences: ["https://kubernetes.default.svc"],
  });
  const result = await auth.authenticate(call("kube-audience-token"));
  assert.ok(!(result instanceof Error));
  assert.deepEqual(result.identities, ["spiffe://td/ns/default/sa/app"]);
});

test("a user that is not a service account", async () => {
  const result = await authenticator().authenticate(call("user-token"));
  assert.ok(result instanceof Error);
  assert.equal(result.message, 'failed to validate the JWT from cluster "": the token is not a service account');
});

test("an API server error says only its status code: TokenReview bodies echo the token", async () => {
  const result = await authenticator().authenticate(call("crash-token"));
  assert.ok(result instanceof Error);
  assert.equal(result.message, 'failed to validate the JWT from cluster "": TokenReview answered HTTP 500');
});

test("clusterid: the local cluster, an alias of it, or refused", async () => {
  assert.ok(!((await authenticator().authenticate(call("app-token", "Kubernetes"))) instanceof Error));
  assert.ok(!((await authenticator().authenticate(call("app-token", "old-name"))) instanceof Error));
  reviews.length = 0;
  const remote = await authenticator().authenticate(call("app-token", "remote-1"));
  assert.ok(remote instanceof Error);
  assert.equal(
    remote.message,
    'client claims to be in cluster "remote-1", but we only know about local cluster "Kubernetes" and remote clusters []',
  );
  assert.equal(reviews.length, 0);
});

test("no bearer token: no TokenReview", async () => {
  reviews.length = 0;
  const result = await authenticator().authenticate(call(undefined));
  assert.ok(result instanceof Error);
  assert.equal(result.message, "target JWT extraction error: no HTTP authorization header exists");
  assert.equal(reviews.length, 0);
});

test("review results as Istio reads them", () => {
  assert.ok(tokenReviewResult({ spec: {}, status: { authenticated: false } }) instanceof Error);
  const badName = tokenReviewResult({
    spec: {},
    status: { authenticated: true, user: { username: "system:serviceaccount:ns", groups: ["system:serviceaccounts"] } },
  });
  assert.ok(badName instanceof Error);
  assert.equal(badName.message, "invalid username field in the token review result");
});
