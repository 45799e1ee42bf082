// The JWT_RULE authenticator against a JWKS and an OIDC discovery document served on 127.0.0.1.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import fastify, { type FastifyInstance } from "fastify";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import type { AuthContext } from "./authenticator.ts";
import { createJwtAuthenticator, type JwtAuthenticator, parseJwtRule } from "./jwt.ts";

type Key = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];

let server: FastifyInstance;
let base: string;
let signingKey: Key;
let otherKey: Key;
let publicJwk: JWK;
let discoveryIssuer: string;

before(async () => {
  const pair = await generateKeyPair("RS256");
  signingKey = pair.privateKey;
  otherKey = (await generateKeyPair("RS256")).privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  server = fastify();
  server.get("/jwks", async () => ({ keys: [publicJwk] }));
  server.get("/oidc/.well-known/openid-configuration", async () => ({
    issuer: discoveryIssuer,
    jwks_uri: `${base}/jwks`,
    id_token_signing_alg_values_supported: ["RS256", "HS256"],
  }));
  server.get("/liar/.well-known/openid-configuration", async () => ({
    issuer: "someone-else",
    jwks_uri: `${base}/jwks`,
  }));
  await server.listen({ host: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  discoveryIssuer = `${base}/oidc`;
});

after(() => server.close());

const ISSUER = "https://issuer.example";
const SA = "system:serviceaccount:default:app";

interface TokenOptions {
  key?: Key;
  issuer?: string;
  audience?: string | string[];
  subject?: string;
  expiresAt?: number;
  notBefore?: number;
}

async function token(options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ aud: options.audience ?? ["istio-ca"] })
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setIssuer(options.issuer ?? ISSUER)
    .setSubject(options.subject ?? SA)
    .setIssuedAt(now)
    .setExpirationTime(options.expiresAt ?? now + 3600);
  if (options.notBefore !== undefined) jwt.setNotBefore(options.notBefore);
  return jwt.sign(options.key ?? signingKey);
}

function bearer(value: string, transport: "grpc" | "http" = "grpc"): AuthContext {
  return { transport, header: (name) => (name === "authorization" ? value : undefined), remoteAddress: "10.0.0.1:5" };
}

async function authenticator(rule: object): Promise<JwtAuthenticator> {
  const created = await createJwtAuthenticator(
    parseJwtRule(JSON.stringify(rule)) as Exclude<ReturnType<typeof parseJwtRule>, Error>,
    "cluster.local",
  );
  assert.ok(!(created instanceof Error), String(created));
  return created;
}

async function failure(auth: JwtAuthenticator, ctx: AuthContext): Promise<string> {
  const result = await auth.authenticate(ctx);
  assert.ok(result instanceof Error, "expected a failure");
  return result.message;
}

describe("JWT_RULE with jwks_uri", () => {
  let auth: JwtAuthenticator;
  before(async () => {
    auth = await authenticator({ issuer: ISSUER, jwks_uri: `${base}/jwks`, audiences: ["istio-ca", "other"] });
  });

  test("a valid token: the service account's SPIFFE id in the mesh trust domain", async () => {
    assert.deepEqual(await auth.authenticate(bearer(`Bearer ${await token()}`)), {
      identities: ["spiffe://cluster.local/ns/default/sa/app"],
      authenticator: "IDTokenAuthenticator",
    });
    // HTTP requests may use Istio's own prefix.
    const http = await auth.authenticate(bearer(`Istio ${await token()}`, "http"));
    assert.ok(!(http instanceof Error));
  });

  test("an expired token", async () => {
    const message = await failure(
      auth,
      bearer(`Bearer ${await token({ expiresAt: Math.floor(Date.now() / 1000) - 10 })}`),
    );
    assert.equal(message, "failed to verify the JWT token (error oidc: token is expired)");
  });

  test("a token valid only later than go-oidc's minute of leeway", async () => {
    const now = Math.floor(Date.now() / 1000);
    assert.ok(!((await auth.authenticate(bearer(`Bearer ${await token({ notBefore: now + 30 })}`))) instanceof Error));
    const message = await failure(auth, bearer(`Bearer ${await token({ notBefore: now + 600 })}`));
    assert.match(message, /before the nbf/);
  });

  test("a wrong audience", async () => {
    const message = await failure(auth, bearer(`Bearer ${await token({ audience: ["kubernetes"] })}`));
    assert.equal(message, "invalid audiences [kubernetes]");
  });

  test("a single-string aud does not decode into Istio's []string claims", async () => {
    const message = await failure(auth, bearer(`Bearer ${await token({ audience: "istio-ca" })}`));
    assert.equal(message, "failed to extract claims from ID token");
  });

  test("a wrong issuer", async () => {
    const message = await failure(auth, bearer(`Bearer ${await token({ issuer: "https://evil.example" })}`));
    assert.match(message, /issued by a different provider/);
  });

  test("a bad signature: same kid, another key", async () => {
    const message = await failure(auth, bearer(`Bearer ${await token({ key: otherKey })}`));
    assert.match(
      message,
      /^failed to verify the JWT token \(error failed to verify signature: signature verification failed\)$/,
    );
  });

  test("a tampered payload", async () => {
    const [header, , signature] = (await token()).split(".");
    const payload = Buffer.from(
      JSON.stringify({ iss: ISSUER, sub: "system:serviceaccount:istio-system:admin", aud: ["istio-ca"], exp: 2e9 }),
    ).toString("base64url");
    const message = await failure(auth, bearer(`Bearer ${header}.${payload}.${signature}`));
    assert.match(message, /signature verification failed/);
  });

  test("a subject that is not a service account", async () => {
    assert.equal(await failure(auth, bearer(`Bearer ${await token({ subject: "alice" })}`)), "invalid sub alice");
    assert.equal(
      await failure(auth, bearer(`Bearer ${await token({ subject: "system:serviceaccount:default" })}`)),
      "invalid sub system:serviceaccount:default",
    );
  });

  test("no token, or not a JWT", async () => {
    assert.equal(
      await failure(auth, { transport: "grpc", header: () => undefined, remoteAddress: "" }),
      "ID token extraction error: no HTTP authorization header exists",
    );
    assert.equal(
      await failure(auth, bearer("Bearer not-a-jwt")),
      "failed to verify the JWT token (error oidc: malformed jwt)",
    );
  });
});

test("an empty audiences list accepts no token, as Istio's checkAudience", async () => {
  const auth = await authenticator({ issuer: ISSUER, jwks_uri: `${base}/jwks` });
  assert.equal(await failure(auth, bearer(`Bearer ${await token()}`)), "invalid audiences [istio-ca]");
});

test("OIDC discovery: the issuer's jwks_uri and supported algorithms", async () => {
  const auth = await authenticator({ issuer: discoveryIssuer, audiences: ["istio-ca"] });
  const result = await auth.authenticate(bearer(`Bearer ${await token({ issuer: discoveryIssuer })}`));
  assert.deepEqual(result, {
    identities: ["spiffe://cluster.local/ns/default/sa/app"],
    authenticator: "IDTokenAuthenticator",
  });
});

test("OIDC discovery fails: no document, or one naming another issuer", async () => {
  const missing = await createJwtAuthenticator({ issuer: `${base}/nothing`, audiences: [] }, "cluster.local");
  assert.ok(missing instanceof Error);
  assert.equal(missing.message, `failed at creating an OIDC provider for ${base}/nothing: 404 Not Found`);
  const liar = await createJwtAuthenticator({ issuer: `${base}/liar`, audiences: [] }, "cluster.local");
  assert.ok(liar instanceof Error);
  assert.match(liar.message, /issuer did not match the issuer returned by provider/);
});

test("JWT_RULE parsing", () => {
  assert.deepEqual(parseJwtRule('{"issuer": "foo", "jwks_uri": "baz", "audiences": ["aud1", "aud2"]}'), {
    issuer: "foo",
    jwksUri: "baz",
    audiences: ["aud1", "aud2"],
  });
  assert.deepEqual(parseJwtRule('{"issuer": "foo", "fromHeaders": []}'), {
    issuer: "foo",
    jwksUri: undefined,
    audiences: [],
  });
  assert.ok(parseJwtRule("{") instanceof Error);
  assert.ok(parseJwtRule('{"audiences": "aud"}') instanceof Error);
});
