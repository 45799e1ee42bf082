// End to end: CreateCertificate on the xDS server's TLS port, which serves istiod's CA-issued
// certificate and authenticates callers by their client certificate.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { create, fromBinary, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { type ChannelCredentials, Client, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { pino } from "pino";
import { Registry } from "prom-client";
import { TestCerts } from "../../../test/support/certs.ts";
import { istioCa } from "../../api/index.ts";
import { GeneratorRegistry } from "../../xds/generator.ts";
import { ClientCertAuthenticator, XdsServer } from "../../xds/server/index.ts";
import { verifyChain } from "./ca.ts";
import { IstiodCertificate, istiodDnsNames } from "./istiod.ts";
import { CaMetrics } from "./metrics.ts";
import { createCsr, exportPrivateKey, generateKeyPair } from "./pki.ts";
import { SelfSignedCa } from "./selfsigned.ts";
import { certificateService } from "./service.ts";
import { MemoryCaStore } from "./store.ts";

const ALICE = "spiffe://cluster.local/ns/default/sa/alice";
const BOB = "spiffe://cluster.local/ns/default/sa/bob";
const METHOD = "/istio.v1.auth.IstioCertificateService/CreateCertificate";

let selfSigned: SelfSignedCa;
let istiod: IstiodCertificate;
let xds: XdsServer;
let securePort: number;
let grpcPort: number;
/** ALICE's key and certificate, and client credentials with them trusting the roots of the start. */
let aliceKeyCert: { key: Buffer; cert: Buffer };
let alice: ChannelCredentials;
const logLines: string[] = [];
const registry = new Registry();

before(async () => {
  selfSigned = await SelfSignedCa.start({ store: new MemoryCaStore(), org: "cluster.local" });
  const ca = selfSigned.ca;
  istiod = await IstiodCertificate.issue(ca, istiodDnsNames({ namespace: "istio-system" }));
  const log = pino({ level: "debug" }, { write: (line: string) => logLines.push(line) });
  xds = new XdsServer({ generators: new GeneratorRegistry(), authenticators: [new ClientCertAuthenticator()], log });
  const metrics = new CaMetrics(registry, ca);
  xds.addService(certificateService({ ca, authenticate: (call) => xds.authenticateCall(call), log, metrics }));
  ({ securePort = 0, grpcPort = 0 } = await xds.listen({
    grpcAddr: "127.0.0.1:0",
    secureGrpcAddr: "127.0.0.1:0",
    tls: { identity: istiod, roots: istiod },
  }));
  const keys = await generateKeyPair("ECDSA-P256");
  const [leaf] = await ca.signForResponse({
    csrPem: await createCsr(keys, [ALICE]),
    subjectIds: [ALICE],
    ttlSeconds: 0,
  });
  aliceKeyCert = { key: Buffer.from(await exportPrivateKey(keys.privateKey)), cert: Buffer.from(leaf) };
  alice = credentials.createSsl(roots(), aliceKeyCert.key, aliceKeyCert.cert);
});

after(async () => {
  istiod.close();
  await xds.close(0);
});

const roots = () => Buffer.from(selfSigned.ca.trustBundle().join(""));

/** Calls CreateCertificate; the response's chain or the gRPC error. */
async function createCertificate(
  creds: ChannelCredentials,
  request: { csr: string; validityDuration?: bigint; metadata?: JsonObject },
  port = securePort,
): Promise<string[] | ServiceError> {
  // The server is reached by address; its certificate names istiod's service.
  const client = new Client(`127.0.0.1:${port}`, creds, { "grpc.ssl_target_name_override": "istiod.istio-system.svc" });
  try {
    return await new Promise((resolve) => {
      client.makeUnaryRequest(
        METHOD,
        (req: istioCa.IstioCertificateRequest) => Buffer.from(toBinary(istioCa.IstioCertificateRequestSchema, req)),
        (bytes: Buffer) => fromBinary(istioCa.IstioCertificateResponseSchema, bytes),
        create(istioCa.IstioCertificateRequestSchema, request),
        new Metadata(),
        (err, response) => resolve(err ?? response?.certChain ?? []),
      );
    });
  } finally {
    client.close();
  }
}

async function csr(identities: string[]): Promise<string> {
  return createCsr(await generateKeyPair("ECDSA-P256"), identities);
}

test("a workload with a client certificate gets a certificate for its own identity", async () => {
  const chain = await createCertificate(alice, { csr: await csr([ALICE]), validityDuration: 3600n });
  assert.ok(Array.isArray(chain), String(chain));
  assert.equal(chain.length, 2);
  const leaf = new X509Certificate(chain[0]);
  assert.equal(leaf.subjectAltName, `URI:${ALICE}`);
  assert.equal(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom), 3_600_000 + 120_000);
  assert.equal(chain[1], selfSigned.ca.trustBundle()[0]);
  assert.equal(verifyChain(chain[0], [], [chain[1]]), undefined);
});

test("a CSR for another identity is refused", async () => {
  const err = await createCertificate(alice, { csr: await csr([BOB]) });
  assert.ok(!Array.isArray(err));
  assert.equal(err.code, status.INVALID_ARGUMENT);
  assert.equal(err.details, "CSR signing error (unable to validate SAN Identities in CSR)");
});

test("a caller without a client certificate is unauthenticated, with no detail", async () => {
  const err = await createCertificate(credentials.createSsl(roots()), { csr: await csr([ALICE]) });
  assert.ok(!Array.isArray(err));
  assert.equal(err.code, status.UNAUTHENTICATED);
  assert.equal(err.details, "request authenticate failure");
});

test("a client certificate from another CA, naming the caller's identity, does not authenticate", async () => {
  const foreign = new TestCerts();
  try {
    foreign.issue("mallory", `URI:${ALICE}`);
    const mallory = credentials.createSsl(
      roots(),
      readFileSync(foreign.file("mallory.key")),
      readFileSync(foreign.file("mallory.crt")),
    );
    const err = await createCertificate(mallory, { csr: await csr([ALICE]) });
    assert.ok(!Array.isArray(err));
    assert.equal(err.code, status.UNAUTHENTICATED);
    assert.equal(err.details, "request authenticate failure");
  } finally {
    foreign.remove();
  }
});

test("a TTL over MAX_WORKLOAD_CERT_TTL is refused", async () => {
  const err = await createCertificate(alice, { csr: await csr([ALICE]), validityDuration: 91n * 24n * 3600n });
  assert.ok(!Array.isArray(err));
  assert.equal(err.code, status.INVALID_ARGUMENT);
  assert.equal(
    err.details,
    "CSR signing error (requested TTL 2184h0m0s is greater than the max allowed TTL 2160h0m0s)",
  );
});

test("impersonation is refused without trusted node accounts", async () => {
  const err = await createCertificate(alice, { csr: await csr([BOB]), metadata: { ImpersonatedIdentity: BOB } });
  assert.ok(!Array.isArray(err));
  assert.equal(err.code, status.UNAUTHENTICATED);
  assert.equal(err.details, "request impersonation authentication failure");
});

test("the plaintext port does not serve the CA (Istio serves it on 15012 only)", async () => {
  const err = await createCertificate(credentials.createInsecure(), { csr: await csr([ALICE]) }, grpcPort);
  assert.ok(!Array.isArray(err));
  assert.equal(err.code, status.UNIMPLEMENTED);
});

test("istiod's certificate names its services and is reissued when the root rotates", async () => {
  const served = new X509Certificate(istiod.current.certChainPem);
  assert.equal(
    served.subjectAltName,
    "DNS:istio-pilot.istio-system.svc, DNS:istiod-remote.istio-system.svc, DNS:istiod.istio-system.svc",
  );
  const before = istiod.current.certChainPem;
  const updates: string[] = [];
  const listener = (u: { certificate: Buffer } | null) => updates.push(u?.certificate.toString() ?? "");
  istiod.addIdentityCertificateListener(listener);
  await selfSigned.rotate({ newKey: true });
  // The reissue runs on the bundle change; wait for the listener to hear it.
  while (updates.length < 2) await new Promise((resolve) => setImmediate(resolve));
  istiod.removeIdentityCertificateListener(listener);
  assert.notEqual(istiod.current.certChainPem, before);
  assert.equal(updates[1], istiod.current.certChainPem);
  assert.equal(istiod.current.caBundlePem, selfSigned.ca.trustBundle().join(""));
  assert.equal(verifyChain(istiod.current.certChainPem, [], selfSigned.ca.trustBundle()), undefined);

  // A client trusting only the old root no longer trusts istiod's new certificate (a new key signed it)...
  const stale = await createCertificate(alice, { csr: await csr([ALICE]) });
  assert.ok(!Array.isArray(stale) && stale.code === status.UNAVAILABLE);
  // ...one with the new trust bundle does, and its old client certificate still authenticates through
  // the overlap; the answer ends with the trust bundle.
  const refreshed = credentials.createSsl(roots(), aliceKeyCert.key, aliceKeyCert.cert);
  const chain = await createCertificate(refreshed, { csr: await csr([ALICE]) });
  assert.ok(Array.isArray(chain), String(chain));
  assert.deepEqual(chain.slice(1), selfSigned.ca.trustBundle());
});

test("no key, CSR or certificate appears in the logs", () => {
  assert.ok(logLines.length > 0);
  const text = logLines.join("");
  assert.ok(text.includes("request authentication failed"), "refusals are logged");
  for (const secret of ["PRIVATE KEY", "CERTIFICATE REQUEST", "BEGIN CERTIFICATE"])
    assert.ok(!text.includes(secret), secret);
});

test("Istio's CA metrics count what happened above", async () => {
  const value = async (name: string, labels: Record<string, string> = {}) => {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
    const sample = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
    return sample?.value;
  };
  // Seven calls reached the service: two signed, three unauthenticated, two refused CSRs.
  assert.equal(await value("citadel_server_csr_count"), 7);
  assert.equal(await value("citadel_server_success_cert_issuance_count"), 2);
  assert.equal(await value("citadel_server_authentication_failure_count"), 3);
  assert.equal(await value("citadel_server_csr_sign_err_count", { error: "CSR_ERROR" }), 1);
  assert.equal(await value("citadel_server_csr_sign_err_count", { error: "TTL_ERROR" }), 1);
  const rootExpiry = await value("citadel_server_root_cert_expiry_timestamp");
  assert.equal(rootExpiry, Date.parse(new X509Certificate(selfSigned.ca.trustBundle()[0]).validTo) / 1000);
  assert.equal(await value("citadel_server_cert_chain_expiry_timestamp"), undefined, "a self-signed root has no chain");
});
