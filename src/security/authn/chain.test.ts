import assert from "node:assert/strict";
import { test } from "node:test";
import { KubeConfig } from "@kubernetes/client-node";
import { authenticate } from "./authenticator.ts";
import { authenticatorEnv, buildAuthenticators } from "./chain.ts";

const kubeConfig = new KubeConfig();
kubeConfig.loadFromOptions({
  clusters: [{ name: "c", server: "http://127.0.0.1:1" }],
  users: [{ name: "u" }],
  contexts: [{ name: "c", cluster: "c", user: "u" }],
  currentContext: "c",
});

test("istiod's order: client certificate, JWT_RULE, TokenReview, XFCC", async () => {
  const all = await buildAuthenticators({
    trustDomain: "cluster.local",
    jwtRule: '{"issuer": "https://issuer.example", "jwks_uri": "http://127.0.0.1:1/jwks", "audiences": ["istio-ca"]}',
    kube: { kubeConfig, clusterId: "Kubernetes" },
    trustedGatewayCidrs: ["10.0.0.0/8"],
  });
  assert.ok(!(all instanceof Error));
  assert.deepEqual(
    all.map((a) => a.name),
    ["ClientCertAuthenticator", "IDTokenAuthenticator", "KubeJWTAuthenticator", "XfccAuthenticator"],
  );
  const minimal = await buildAuthenticators({ trustDomain: "cluster.local" });
  assert.ok(!(minimal instanceof Error));
  assert.deepEqual(
    minimal.map((a) => a.name),
    ["ClientCertAuthenticator"],
  );
});

test("a chain over a trusted gateway's call: the client certificate authenticator fails, XFCC vouches", async () => {
  const chain = await buildAuthenticators({ trustDomain: "cluster.local", trustedGatewayCidrs: ["10.0.0.0/8"] });
  assert.ok(!(chain instanceof Error));
  const caller = await authenticate(chain, {
    transport: "http",
    header: (name) => (name === "x-forwarded-client-cert" ? "URI=spiffe://cluster.local/ns/a/sa/b" : undefined),
    remoteAddress: "10.1.2.3:4000",
  });
  assert.deepEqual(caller, { identities: ["spiffe://cluster.local/ns/a/sa/b"], authenticator: "XfccAuthenticator" });
});

test("a malformed JWT_RULE, or an issuer without discovery, stops istiod", async () => {
  const bad = await buildAuthenticators({ trustDomain: "td", jwtRule: "{issuer" });
  assert.ok(bad instanceof Error);
  assert.match(bad.message, /^error initializing OIDC: failed to unmarshal JWT rule/);
  const unreachable = await buildAuthenticators({ trustDomain: "td", jwtRule: '{"issuer": "http://127.0.0.1:1"}' });
  assert.ok(unreachable instanceof Error);
  assert.match(unreachable.message, /failed at creating an OIDC provider for http:\/\/127.0.0.1:1/);
});

test("the environment istiod reads", () => {
  assert.deepEqual(authenticatorEnv({}), { jwtRule: undefined, tokenAudiences: ["istio-ca"], trustedGatewayCidrs: [] });
  assert.deepEqual(
    authenticatorEnv({
      JWT_RULE: '{"issuer":"x"}',
      TOKEN_AUDIENCES: "a,b",
      TRUSTED_GATEWAY_CIDR: "10.0.0.0/8,::1/128",
    }),
    { jwtRule: '{"issuer":"x"}', tokenAudiences: ["a", "b"], trustedGatewayCidrs: ["10.0.0.0/8", "::1/128"] },
  );
});
