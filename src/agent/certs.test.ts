// Workload certificates: a real CreateCertificate over TLS with a bearer token (or the workload's own
// client certificate), files written for gRPC's file_watcher, renewal at half life, and an outage
// survived with the old certificate.
import assert from "node:assert/strict";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { pino } from "pino";
import { spiffeId, TestCa } from "../../test/proxyless/mtls-ca.ts";
import {
  CERT_CHAIN_FILE,
  type CsrSigner,
  KEY_FILE,
  keyAlgorithmFromEnv,
  ROOT_CERT_FILE,
  rootsOfChain,
  rotationDelayMs,
  WorkloadCertificates,
  type WorkloadSecret,
  workloadIdentity,
} from "./certs.ts";
import { caClientSigner } from "./certs-client.ts";

const ALICE = spiffeId("alice");
const logLines: string[] = [];
const log = pino({ level: "debug" }, { write: (line: string) => logLines.push(line) });
let ca: TestCa;
let dir: string;

before(async () => {
  ca = await TestCa.start({ "alice-token": ALICE });
  dir = mkdtempSync(join(tmpdir(), "sluice-certs-"));
});

after(async () => {
  await ca.close();
  rmSync(dir, { recursive: true, force: true });
});

function signer(tokenPath?: string, clientCertificate?: () => WorkloadSecret | undefined): CsrSigner {
  return caClientSigner({
    address: ca.address,
    rootCertPath: ca.rootCertPath,
    serverName: "istiod.istio-system.svc",
    tokenPath,
    clientCertificate,
  });
}

/** The next secret a WorkloadCertificates announces. */
function nextUpdate(certs: WorkloadCertificates): Promise<WorkloadSecret> {
  return new Promise((resolve) => {
    const unsubscribe = certs.onUpdate((secret) => {
      unsubscribe();
      resolve(secret);
    });
  });
}

test("the renewal point is the grace ratio of the lifetime before expiry, jittered, never negative", () => {
  const secret = { createdAt: 0, expiresAt: 1000 };
  assert.equal(
    rotationDelayMs(secret, 0, 0.5, 0.01, () => 0.5),
    500,
  );
  assert.equal(
    rotationDelayMs(secret, 0, 0.5, 0.01, () => 0),
    510,
  );
  assert.equal(Math.round(rotationDelayMs(secret, 0, 0.5, 0.01, () => 0.999_999)), 490);
  assert.equal(
    rotationDelayMs(secret, 800, 0.5, 0.01, () => 0.5),
    0,
  );
});

test("the identity and key type come from the pod's environment as pilot-agent reads them", () => {
  assert.equal(
    workloadIdentity({ POD_NAMESPACE: "shop", SERVICE_ACCOUNT: "cart", TRUST_DOMAIN: "example.org" }),
    "spiffe://example.org/ns/shop/sa/cart",
  );
  assert.equal(keyAlgorithmFromEnv({}), "RSA-2048");
  assert.equal(keyAlgorithmFromEnv({ ECC_SIGNATURE_ALGORITHM: "ECDSA" }), "ECDSA-P256");
});

test("the roots of an answer are its self-signed certificates, all of them during a root overlap", async () => {
  const { certChainPem } = await ca.selfSigned.ca.generateKeyCert(["leaf.example"], 60_000);
  const leaf = certChainPem.slice(0, certChainPem.indexOf("-----END CERTIFICATE-----") + 26);
  const [root] = ca.selfSigned.ca.trustBundle();
  assert.deepEqual(rootsOfChain([leaf, root]), [root]);
  const other = await TestCa.start({});
  try {
    const [otherRoot] = other.selfSigned.ca.trustBundle();
    assert.deepEqual(rootsOfChain([leaf, root, otherRoot]), [root, otherRoot]);
  } finally {
    await other.close();
  }
});

test("a token-authenticated agent gets its certificate and writes the three files", async () => {
  const out = join(dir, "token");
  const certs = new WorkloadCertificates({
    identity: ALICE,
    sign: signer(ca.tokenFile("alice.token", "alice-token\n")),
    outputDir: out,
    keyAlgorithm: "ECDSA-P256",
    log,
  });
  try {
    const secret = await certs.start();
    const chain = readFileSync(join(out, CERT_CHAIN_FILE), "utf8");
    const key = readFileSync(join(out, KEY_FILE), "utf8");
    assert.equal(chain, secret.certChainPem);
    assert.equal(readFileSync(join(out, ROOT_CERT_FILE), "utf8"), ca.rootsPem);
    const leaf = new X509Certificate(chain);
    assert.equal(leaf.subjectAltName, `URI:${ALICE}`);
    assert.ok(leaf.checkPrivateKey(createPrivateKey(key)), "the key is the certificate's");
    assert.ok(leaf.verify(new X509Certificate(ca.rootsPem).publicKey));
  } finally {
    certs.stop();
  }
});

test("an unknown token is refused and retried, writing nothing; a valid one then succeeds", async () => {
  const out = join(dir, "retry");
  const tokenPath = ca.tokenFile("wrong.token", "wrong-token");
  const certs = new WorkloadCertificates({
    identity: ALICE,
    sign: signer(tokenPath),
    outputDir: out,
    keyAlgorithm: "ECDSA-P256",
    backoff: { initialMs: 20, maxMs: 40 },
    log,
  });
  try {
    const first = certs.start();
    while (!logLines.some((l) => l.includes("UNAUTHENTICATED"))) await new Promise((r) => setTimeout(r, 10));
    assert.equal(certs.current, undefined);
    assert.throws(() => readFileSync(join(out, KEY_FILE)), { code: "ENOENT" });
    // The token file is read on every attempt: the kubelet's refreshed token is picked up.
    ca.tokenFile("wrong.token", "alice-token");
    const secret = await first;
    assert.equal(new X509Certificate(secret.certChainPem).subjectAltName, `URI:${ALICE}`);
  } finally {
    certs.stop();
  }
});

test("a short-lived certificate is renewed with a new key, authenticating with the current certificate", async () => {
  const out = join(dir, "rotate");
  let certs: WorkloadCertificates | undefined;
  // No token: the second request is authenticated by the first certificate alone.
  const tokenPath = ca.tokenFile("once.token", "alice-token");
  let calls = 0;
  const withToken = signer(tokenPath);
  const withCert = signer(undefined, () => certs?.current);
  certs = new WorkloadCertificates({
    identity: ALICE,
    sign: (csr, ttl) => (calls++ === 0 ? withToken(csr, ttl) : withCert(csr, ttl)),
    outputDir: out,
    ttlSeconds: 2,
    keyAlgorithm: "ECDSA-P256",
    log,
  });
  try {
    const first = await certs.start();
    const second = await nextUpdate(certs);
    assert.notEqual(second.keyPem, first.keyPem);
    assert.notEqual(second.certChainPem, first.certChainPem);
    assert.equal(readFileSync(join(out, KEY_FILE), "utf8"), second.keyPem);
    assert.equal(readFileSync(join(out, CERT_CHAIN_FILE), "utf8"), second.certChainPem);
  } finally {
    certs.stop();
  }
});

test("during a CA outage the old certificate stays in place, and renewal resumes when the CA is back", async () => {
  const out = join(dir, "outage");
  const real = signer(ca.tokenFile("outage.token", "alice-token"));
  let down = false;
  let failures = 0;
  const certs = new WorkloadCertificates({
    identity: ALICE,
    sign: async (csr, ttl) => {
      if (!down) return real(csr, ttl);
      failures++;
      throw new Error("connect ECONNREFUSED");
    },
    outputDir: out,
    ttlSeconds: 2,
    keyAlgorithm: "ECDSA-P256",
    backoff: { initialMs: 10, maxMs: 20 },
    log,
  });
  try {
    const first = await certs.start();
    down = true;
    while (failures < 3) await new Promise((r) => setTimeout(r, 10));
    assert.equal(certs.current, first);
    assert.equal(readFileSync(join(out, CERT_CHAIN_FILE), "utf8"), first.certChainPem);
    const renewed = nextUpdate(certs);
    down = false;
    assert.notEqual((await renewed).certChainPem, first.certChainPem);
  } finally {
    certs.stop();
  }
});

test("no key or token appears in the agent's logs", () => {
  const text = logLines.join("");
  assert.ok(text.includes("workload certificate issued"));
  for (const secret of ["PRIVATE KEY", "BEGIN CERTIFICATE", "alice-token", "wrong-token"])
    assert.ok(!text.includes(secret), secret);
});
