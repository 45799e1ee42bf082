// Security: tokens and private keys never reach the logs. The xDS server's TLS port (ADS and the CA)
// runs the full chain (client certificate, JWT_RULE, TokenReview) with pino capturing every line at
// debug level, through succeeding and failing authentications; then every line is scanned for the
// tokens, their signatures and the private keys in play.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type CallCredentials,
  type ChannelCredentials,
  Client,
  credentials,
  Metadata,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import { KubeConfig } from "@kubernetes/client-node";
import fastify, { type FastifyInstance } from "fastify";
import { exportJWK, exportPKCS8, generateKeyPair, SignJWT } from "jose";
import { pino } from "pino";
import { deserializer, methodPath, serializer } from "../../src/api/grpc-service.ts";
import { discovery, istioCa } from "../../src/api/index.ts";
import { newPushContext } from "../../src/model/push-context.ts";
import { createJwtAuthenticator } from "../../src/security/authn/index.ts";
import { KubeJwtAuthenticator } from "../../src/security/authn/kube.ts";
import {
  certificateService,
  createCsr,
  exportPrivateKey,
  generateKeyPair as generateCaKeyPair,
  IstiodCertificate,
  istiodDnsNames,
  MemoryCaStore,
  SelfSignedCa,
} from "../../src/security/ca/index.ts";
import { ClientCertAuthenticator, XdsServer } from "../../src/xds/server/index.ts";
import { TypeUrl } from "../../src/xds/types.ts";
import { SotwClient, sidecarNode } from "../support/ads-client.ts";
import { edsCluster, testGenerators } from "../support/xds-fixtures.ts";

const ISSUER = "https://issuer.example";
const ALICE = "spiffe://cluster.local/ns/default/sa/alice";
const METHOD = "/istio.v1.auth.IstioCertificateService/CreateCertificate";
/** Service account tokens the fake API server knows; the crash token makes it fail, echoing the token. */
const KUBE_TOKEN = "kube-sa-token-0123456789abcdef";
const KUBE_CRASH_TOKEN = "kube-crash-token-fedcba9876543210";

const lines: string[] = [];
/** Every string that must never appear in a log line. */
const secrets: string[] = [];

let jwks: FastifyInstance;
let kubeApi: FastifyInstance;
let selfSigned: SelfSignedCa;
let istiod: IstiodCertificate;
let xds: XdsServer;
let address: string;
let signingKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
let roots: Buffer;
let alice: ChannelCredentials;

before(async () => {
  const keys = await generateKeyPair("RS256", { extractable: true });
  signingKey = keys.privateKey;
  const privateJwk = await exportJWK(keys.privateKey);
  secrets.push(...pemBody(await exportPKCS8(keys.privateKey)), String(privateJwk.d), String(privateJwk.p));
  jwks = fastify();
  const publicJwk = { ...(await exportJWK(keys.publicKey)), kid: "k1", alg: "RS256" };
  jwks.get("/jwks", async () => ({ keys: [publicJwk] }));
  await jwks.listen({ host: "127.0.0.1", port: 0 });

  kubeApi = fastify();
  kubeApi.post("/apis/authentication.k8s.io/v1/tokenreviews", async (req, reply) => {
    const review = req.body as { spec: { token: string } };
    // A failing API server that quotes the request, token included.
    if (review.spec.token !== KUBE_TOKEN)
      return reply.code(500).send({ message: `cannot review ${review.spec.token}` });
    return reply.code(201).send({
      ...review,
      status: {
        authenticated: true,
        user: { username: "system:serviceaccount:default:alice", groups: ["system:serviceaccounts"] },
      },
    });
  });
  await kubeApi.listen({ host: "127.0.0.1", port: 0 });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${port(kubeApi)}`, skipTLSVerify: true }],
    users: [{ name: "u" }],
    contexts: [{ name: "c", cluster: "c", user: "u" }],
    currentContext: "c",
  });

  const jwt = await createJwtAuthenticator(
    { issuer: ISSUER, jwksUri: `http://127.0.0.1:${port(jwks)}/jwks`, audiences: ["istio-ca"] },
    "cluster.local",
  );
  assert.ok(!(jwt instanceof Error));

  const store = new MemoryCaStore();
  selfSigned = await SelfSignedCa.start({ store, org: "cluster.local" });
  istiod = await IstiodCertificate.issue(selfSigned.ca, istiodDnsNames({ namespace: "istio-system" }));
  const log = pino({ level: "debug" }, { write: (line: string) => lines.push(line) });
  xds = new XdsServer({
    generators: testGenerators(),
    initialPush: newPushContext({ [TypeUrl.Cluster]: [edsCluster("a")] }),
    authenticators: [
      new ClientCertAuthenticator(),
      jwt,
      new KubeJwtAuthenticator({ kubeConfig, clusterId: "Kubernetes", trustDomain: "cluster.local" }),
    ],
    log,
  });
  xds.addService(certificateService({ ca: selfSigned.ca, authenticate: (call) => xds.authenticateCall(call), log }));
  const { securePort } = await xds.listen({ secureGrpcAddr: "127.0.0.1:0", tls: { identity: istiod, roots: istiod } });
  address = `127.0.0.1:${securePort}`;

  roots = Buffer.from(selfSigned.ca.trustBundle().join(""));
  const aliceKeys = await generateCaKeyPair("ECDSA-P256");
  const [leaf] = await selfSigned.ca.signForResponse({
    csrPem: await createCsr(aliceKeys, [ALICE]),
    subjectIds: [ALICE],
    ttlSeconds: 0,
  });
  const aliceKeyPem = await exportPrivateKey(aliceKeys.privateKey);
  secrets.push(...pemBody(aliceKeyPem));
  alice = credentials.createSsl(roots, Buffer.from(aliceKeyPem), Buffer.from(leaf));
  const caSecret = await store.load();
  assert.ok(caSecret, "the CA's secret is stored");
  for (const value of Object.values(caSecret))
    if (/PRIVATE KEY/.test(String(value))) secrets.push(...pemBody(String(value)));
});

after(async () => {
  istiod.close();
  await xds.close(0);
  await jwks.close();
  await kubeApi.close();
});

function port(app: FastifyInstance): number {
  return (app.server.address() as AddressInfo).port;
}

/** The base64 lines of a PEM block: any of them in a log would be key material. */
function pemBody(pem: string): string[] {
  return pem.split("\n").filter((line) => line.length >= 32 && !line.startsWith("-----"));
}

/** A JWT for alice; it and its signature join the secrets. */
async function aliceToken(options: { expired?: boolean; foreignKey?: boolean } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const key = options.foreignKey ? (await generateKeyPair("RS256")).privateKey : signingKey;
  const token = await new SignJWT({ aud: ["istio-ca"] })
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setIssuer(ISSUER)
    .setSubject("system:serviceaccount:default:alice")
    .setExpirationTime(options.expired ? now - 60 : now + 600)
    .sign(key);
  secrets.push(token, token.split(".")[2]);
  return token;
}

function bearer(token: string): CallCredentials {
  return credentials.createFromMetadataGenerator((_params, callback) => {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${token}`);
    callback(null, metadata);
  });
}

const withToken = (token: string) => credentials.combineChannelCredentials(credentials.createSsl(roots), bearer(token));

async function createCertificate(creds: ChannelCredentials): Promise<string[] | ServiceError> {
  const client = new Client(address, creds, { "grpc.ssl_target_name_override": "istiod.istio-system.svc" });
  const keys = await generateCaKeyPair("ECDSA-P256");
  const request = create(istioCa.IstioCertificateRequestSchema, { csr: await createCsr(keys, [ALICE]) });
  try {
    return await new Promise((resolve) => {
      client.makeUnaryRequest(
        METHOD,
        (req: istioCa.IstioCertificateRequest) => Buffer.from(toBinary(istioCa.IstioCertificateRequestSchema, req)),
        (bytes: Buffer) => fromBinary(istioCa.IstioCertificateResponseSchema, bytes),
        request,
        new Metadata(),
        (err, response) => resolve(err ?? response?.certChain ?? []),
      );
    });
  } finally {
    client.close();
  }
}

/** An ADS stream on the TLS port, opened with alice's node. */
function adsStream(creds: ChannelCredentials): SotwClient {
  const client = new Client(address, creds, { "grpc.ssl_target_name_override": "istiod.istio-system.svc" });
  const m = discovery.AggregatedDiscoveryService.method.streamAggregatedResources;
  const ads = new SotwClient(
    client,
    client.makeBidiStreamRequest(methodPath(m), serializer(m.input), deserializer(m.output)),
  );
  ads.request({ node: sidecarNode("alice-1", "default", { SERVICE_ACCOUNT: "alice" }), typeUrl: TypeUrl.Cluster });
  return ads;
}

test("succeeding and failing authentications leave no token or key in the logs", async () => {
  // The CA: a client certificate, a valid JWT and a service account token succeed.
  for (const creds of [alice, withToken(await aliceToken()), withToken(KUBE_TOKEN)]) {
    const chain = await createCertificate(creds);
    assert.ok(Array.isArray(chain), String(chain));
  }
  // An expired JWT, a JWT signed by another key and a token the API server chokes on fail, no details given.
  for (const token of [await aliceToken({ expired: true }), await aliceToken({ foreignKey: true }), KUBE_CRASH_TOKEN]) {
    const err = await createCertificate(withToken(token));
    assert.ok(!Array.isArray(err));
    assert.equal(err.code, status.UNAUTHENTICATED);
    assert.equal(err.details, "request authenticate failure");
  }
  // ADS: a client certificate and a valid JWT are served; an expired JWT is refused, no details given.
  for (const creds of [alice, withToken(await aliceToken())]) {
    const ads = adsStream(creds);
    assert.equal((await ads.next()).resources.length, 1);
    ads.close();
  }
  const refused = adsStream(withToken(await aliceToken({ expired: true })));
  assert.deepEqual(await refused.ended, { code: status.UNAUTHENTICATED, details: "authentication failure" });
  refused.close();
  secrets.push(KUBE_TOKEN, KUBE_CRASH_TOKEN);

  // The reasons were logged at debug level, so the scan below looked at them.
  const failures = lines.filter((line) => line.includes('"msg":"authentication failed"'));
  assert.equal(failures.length, 4);
  assert.match(failures[0], /oidc: token is expired/);
  assert.match(failures[1], /signature verification failed/);
  assert.match(failures[2], /TokenReview answered HTTP 500/);
  assert.match(failures[3], /oidc: token is expired/);
  for (const secret of secrets) {
    assert.ok(secret.length >= 16, "a secret long enough not to match by chance");
    for (const line of lines) assert.ok(!line.includes(secret), `a log line holds a secret: ${line}`);
  }
  for (const line of lines) assert.doesNotMatch(line, /PRIVATE KEY|Bearer /);
});
