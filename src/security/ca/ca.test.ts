import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { CaError, type CertificateAuthority, verifyChain } from "./ca.ts";
import { istiodDnsNames } from "./istiod.ts";
import { createCsr, generateKeyPair, type KeyAlgorithm, splitPemCertificates, x509 } from "./pki.ts";
import { SelfSignedCa } from "./selfsigned.ts";
import { caSettingsFromEnv } from "./setup.ts";
import { FileCaStore, MemoryCaStore } from "./store.ts";

const ALICE = "spiffe://cluster.local/ns/default/sa/alice";
const BOB = "spiffe://cluster.local/ns/default/sa/bob";
const HOUR = 3_600_000;

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sluice-ca-"));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function selfSigned(options: { keyAlgorithm?: KeyAlgorithm; rootTtlMs?: number } = {}): Promise<SelfSignedCa> {
  return SelfSignedCa.start({ store: new MemoryCaStore(), org: "cluster.local", ...options });
}

async function csrFor(identities: string[], algorithm: KeyAlgorithm = "ECDSA-P256"): Promise<string> {
  return createCsr(await generateKeyPair(algorithm), identities);
}

async function sign(ca: CertificateAuthority, identities: string[], ttlSeconds = 0): Promise<string[]> {
  return ca.signForResponse({ csrPem: await csrFor(identities), subjectIds: identities, ttlSeconds });
}

/** `openssl verify` of a leaf against roots through intermediates; the output, or the failure's. */
function opensslVerify(leaf: string, intermediates: string[], roots: string[]): string {
  const dir = tempDir();
  writeFileSync(join(dir, "leaf.pem"), leaf);
  writeFileSync(join(dir, "roots.pem"), roots.join(""));
  const args = ["verify", "-CAfile", join(dir, "roots.pem")];
  if (intermediates.length > 0) {
    writeFileSync(join(dir, "chain.pem"), intermediates.join(""));
    args.push("-untrusted", join(dir, "chain.pem"));
  }
  try {
    return execFileSync("openssl", [...args, join(dir, "leaf.pem")], { stdio: "pipe" }).toString();
  } catch (err) {
    return String((err as { stdout?: Buffer }).stdout ?? err);
  }
}

function lifetimeMs(pem: string): number {
  const cert = new X509Certificate(pem);
  return Date.parse(cert.validTo) - Date.parse(cert.validFrom);
}

for (const keyAlgorithm of ["ECDSA-P256", "RSA-2048"] as const) {
  test(`${keyAlgorithm} root: O=<trust domain>, CA, 10 years; a CSR is signed with the caller's SPIFFE id`, async () => {
    const { ca } = await selfSigned({ keyAlgorithm });
    const [rootPem] = ca.trustBundle();
    const root = new X509Certificate(rootPem);
    assert.equal(root.subject, "O=cluster.local");
    assert.equal(root.ca, true);
    assert.equal(root.publicKey.asymmetricKeyType, keyAlgorithm === "ECDSA-P256" ? "ec" : "rsa");
    assert.equal(Math.round(lifetimeMs(rootPem) / (24 * HOUR)), 3650);

    const chain = await sign(ca, [ALICE]);
    assert.equal(chain.length, 2, "leaf, then the root");
    assert.ok(chain.every((pem) => pem.endsWith("-----END CERTIFICATE-----\n")));
    const leaf = new X509Certificate(chain[0]);
    assert.equal(leaf.subjectAltName, `URI:${ALICE}`);
    assert.equal(leaf.subject ?? "", "", "no subject: the identity is in the SAN");
    assert.equal(leaf.ca, false);
    assert.deepEqual(leaf.keyUsage?.sort(), ["1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"]);
    assert.equal(chain[1], rootPem, "the root comes last");
    assert.ok(leaf.checkIssued(root) && leaf.verify(root.publicKey));
    assert.equal(verifyChain(chain[0], [], [rootPem]), undefined);
    assert.match(opensslVerify(chain[0], [], [rootPem]), /OK/);
  });
}

test("an RSA CSR is signed by an ECDSA CA", async () => {
  const { ca } = await selfSigned();
  const csrPem = await csrFor([ALICE], "RSA-2048");
  const [leaf, root] = await ca.signForResponse({ csrPem, subjectIds: [ALICE], ttlSeconds: 0 });
  assert.equal(new X509Certificate(leaf).publicKey.asymmetricKeyType, "rsa");
  assert.match(opensslVerify(leaf, [], [root]), /OK/);
});

test("a CSR naming another identity is refused; one naming none gets the caller's", async () => {
  const { ca } = await selfSigned();
  await assert.rejects(
    ca.sign({ csrPem: await csrFor([BOB]), subjectIds: [ALICE], ttlSeconds: 0 }),
    (err: unknown) =>
      err instanceof CaError && err.type === "CSR_ERROR" && err.message === "unable to validate SAN Identities in CSR",
  );
  await assert.rejects(ca.sign({ csrPem: await csrFor([ALICE, BOB]), subjectIds: [ALICE], ttlSeconds: 0 }), CaError);
  const leaf = await ca.sign({ csrPem: await csrFor([]), subjectIds: [ALICE], ttlSeconds: 0 });
  assert.equal(new X509Certificate(leaf).subjectAltName, `URI:${ALICE}`);
});

test("malformed and forged CSRs are CSR errors", async () => {
  const { ca } = await selfSigned();
  const refused = (message: RegExp) => (err: unknown) =>
    err instanceof CaError && err.type === "CSR_ERROR" && message.test(err.message);
  await assert.rejects(
    ca.sign({ csrPem: "not a csr", subjectIds: [ALICE], ttlSeconds: 0 }),
    refused(/^certificate signing request is not properly encoded$/),
  );
  await assert.rejects(
    ca.sign({
      csrPem: "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n",
      subjectIds: [ALICE],
      ttlSeconds: 0,
    }),
    refused(/^failed to parse X.509 certificate signing request$/),
  );
  // The SAN of an honest CSR swapped for another: the signature no longer matches.
  const good = new x509.Pkcs10CertificateRequest(await csrFor([ALICE]));
  const der = Buffer.from(good.rawData);
  const at = der.indexOf(Buffer.from("alice"));
  der.write("alicf", at);
  const forged = x509.PemConverter.encode(der, "CERTIFICATE REQUEST");
  await assert.rejects(
    ca.sign({ csrPem: forged, subjectIds: [ALICE.replace("alice", "alicf")], ttlSeconds: 0 }),
    refused(/signature/),
  );
});

test("TTL: default 24h, requested honoured, 90 days allowed, more refused with Istio's error", async () => {
  const { ca } = await selfSigned();
  const grace = 2 * 60_000;
  const [byDefault] = await sign(ca, [ALICE], 0);
  assert.equal(lifetimeMs(byDefault), 24 * HOUR + grace);
  const [negative] = await sign(ca, [ALICE], -5);
  assert.equal(lifetimeMs(negative), 24 * HOUR + grace);
  const [hour] = await sign(ca, [ALICE], 3600);
  assert.equal(lifetimeMs(hour), HOUR + grace);
  const [max] = await sign(ca, [ALICE], 90 * 24 * 3600);
  assert.equal(lifetimeMs(max), 90 * 24 * HOUR + grace);
  await assert.rejects(
    sign(ca, [ALICE], 90 * 24 * 3600 + 1),
    (err: unknown) =>
      err instanceof CaError &&
      err.type === "TTL_ERROR" &&
      err.message === "requested TTL 2160h0m1s is greater than the max allowed TTL 2160h0m0s",
  );
});

test("TTL settings come from Istio's environment variables", async () => {
  const settings = caSettingsFromEnv({ DEFAULT_WORKLOAD_CERT_TTL: "2h", MAX_WORKLOAD_CERT_TTL: "48h" });
  assert.equal(settings.defaultCertTtlMs, 2 * HOUR);
  assert.equal(settings.maxCertTtlMs, 48 * HOUR);
  assert.equal(settings.rootTtlMs, 3650 * 24 * HOUR);
  assert.equal(settings.cacertsDir, "./etc/cacerts");
  assert.equal(settings.rotatorJitter, true);
  assert.equal(caSettingsFromEnv({ CITADEL_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: "false" }).rotatorJitter, false);
  assert.throws(
    () => caSettingsFromEnv({ MAX_WORKLOAD_CERT_TTL: "3days" }),
    /MAX_WORKLOAD_CERT_TTL: time: unknown unit/,
  );

  const ca = await SelfSignedCa.start({ store: new MemoryCaStore(), org: "cluster.local", ...settings });
  const [leaf] = await sign(ca.ca, [ALICE]);
  assert.equal(lifetimeMs(leaf), 2 * HOUR + 2 * 60_000);
  await assert.rejects(sign(ca.ca, [ALICE], 49 * 3600), /greater than the max allowed TTL 48h0m0s/);
});

test("a leaf never outlives the root that signed it", async () => {
  const { ca } = await selfSigned({ rootTtlMs: HOUR });
  const [leaf, root] = await sign(ca, [ALICE], 0);
  assert.equal(new X509Certificate(leaf).validTo, new X509Certificate(root).validTo);
});

test("the root is persisted in --caDir and reloaded on restart; the key file is private", async () => {
  const dir = tempDir();
  const first = await SelfSignedCa.start({ store: new FileCaStore(dir), org: "cluster.local" });
  const [leaf] = await sign(first.ca, [ALICE]);
  assert.equal(statSync(join(dir, "ca-key.pem")).mode & 0o777, 0o600);

  const restarted = await SelfSignedCa.start({ store: new FileCaStore(dir), org: "cluster.local" });
  assert.deepEqual(restarted.ca.trustBundle(), first.ca.trustBundle());
  // Certificates issued before the restart still verify, and new ones chain to the same root.
  assert.equal(verifyChain(leaf, [], restarted.ca.trustBundle()), undefined);
  const [again] = await sign(restarted.ca, [ALICE]);
  assert.equal(verifyChain(again, [], first.ca.trustBundle()), undefined);
});

test("rotation on the same key (Istio's): old and new roots both trusted, old and new leaves verify", async () => {
  const store = new MemoryCaStore();
  const ca = await SelfSignedCa.start({ store, org: "cluster.local", gracePeriodPercentile: 100 });
  const [oldLeaf] = await sign(ca.ca, [ALICE]);
  const [oldRoot] = ca.ca.trustBundle();
  const changes: string[] = [];
  ca.ca.onBundleChange((b) => changes.push(b.certPem));

  assert.equal(await ca.checkAndRotate(), "rotated");
  const bundle = ca.ca.trustBundle();
  assert.equal(bundle.length, 2);
  assert.equal(bundle[0], oldRoot);
  assert.equal(bundle[1], ca.ca.bundle.certPem, "the signing root is last");
  assert.notEqual(bundle[1], oldRoot);
  assert.deepEqual(changes, [bundle[1]]);
  assert.equal(new X509Certificate(bundle[1]).subject, "O=cluster.local");

  const [newLeaf] = await sign(ca.ca, [ALICE]);
  assert.match(opensslVerify(oldLeaf, [], bundle), /OK/);
  assert.match(opensslVerify(newLeaf, [], bundle), /OK/);
  // The same key signs: the new root alone still verifies old leaves.
  assert.match(opensslVerify(oldLeaf, [], [bundle[1]]), /OK/);
  // Persisted: a restart sees both roots.
  const restarted = await SelfSignedCa.start({ store, org: "cluster.local" });
  assert.deepEqual(restarted.ca.trustBundle(), bundle);
});

test("rotation to a new key keeps the old root trusted for the overlap, then drops it", async () => {
  let now = Date.now();
  const store = new MemoryCaStore();
  const ca = await SelfSignedCa.start({ store, org: "cluster.local", rootOverlapMs: HOUR, now: () => now });
  const [oldLeaf] = await sign(ca.ca, [ALICE]);
  const [oldRoot] = ca.ca.trustBundle();

  await ca.rotate({ newKey: true });
  const [, newRoot] = ca.ca.trustBundle();
  assert.deepEqual(ca.ca.trustBundle(), [oldRoot, newRoot]);
  assert.match(opensslVerify(oldLeaf, [], ca.ca.trustBundle()), /OK/);
  assert.doesNotMatch(opensslVerify(oldLeaf, [], [newRoot]), /: OK/, "a new key does not verify old leaves");
  const [newLeaf] = await sign(ca.ca, [ALICE]);
  assert.match(opensslVerify(newLeaf, [], [newRoot]), /OK/);

  assert.equal(await ca.checkAndRotate(), "unchanged", "the overlap is not over");
  now += HOUR + 1000;
  assert.equal(await ca.checkAndRotate(), "reloaded");
  assert.deepEqual(ca.ca.trustBundle(), [newRoot]);
});

test("a replica picks up the root another replica rotated", async () => {
  const store = new MemoryCaStore();
  const a = await SelfSignedCa.start({ store, org: "cluster.local" });
  const b = await SelfSignedCa.start({ store, org: "cluster.local" });
  assert.deepEqual(a.ca.trustBundle(), b.ca.trustBundle(), "the second replica loaded the first one's root");
  await a.rotate();
  assert.equal(await b.checkAndRotate(), "reloaded");
  assert.deepEqual(b.ca.trustBundle(), a.ca.trustBundle());
  assert.equal(b.ca.bundle.certPem, a.ca.bundle.certPem);
});

test("splitPemCertificates keeps one certificate per element", async () => {
  const { ca } = await selfSigned();
  const [leaf, root] = await sign(ca, [ALICE]);
  assert.deepEqual(splitPemCertificates(`${leaf}\n\n${root.trimEnd()}`), [leaf, root]);
});

test("istiod's names: Istio's known services, the revision's, custom hosts; IPs become IP SANs", async () => {
  const names = istiodDnsNames({
    namespace: "mesh",
    revision: "canary",
    customHosts: ["istiod.example.com", "10.0.0.7"],
  });
  assert.deepEqual(names, [
    "10.0.0.7",
    "istio-pilot.mesh.svc",
    "istiod-canary.mesh.svc",
    "istiod-remote.mesh.svc",
    "istiod.example.com",
    "istiod.mesh.svc",
  ]);
  assert.ok(!istiodDnsNames({ namespace: "mesh", revision: "default" }).includes("istiod-default.mesh.svc"));
  const { ca } = await selfSigned();
  const { certChainPem, keyPem } = await ca.generateKeyCert(names, 10 * 365 * 24 * HOUR);
  const cert = new X509Certificate(certChainPem);
  assert.match(cert.subjectAltName ?? "", /^IP Address:10\.0\.0\.7, DNS:istio-pilot\.mesh\.svc, /);
  assert.ok(cert.checkPrivateKey(createPrivateKey(keyPem)));
  // Clamped to the root's life, and the workload TTL limit does not apply to istiod's own certificate.
  assert.equal(cert.validTo, new X509Certificate(ca.trustBundle()[0]).validTo);
});

test("run() checks the root on its interval until stop()", async () => {
  const ca = await SelfSignedCa.start({ store: new MemoryCaStore(), org: "cluster.local", gracePeriodPercentile: 100 });
  const rotated = new Promise<void>((resolve) => ca.ca.onBundleChange(() => resolve()));
  // The rotator's timer does not hold the process open; this test does, while it waits.
  const keepAlive = setInterval(() => {}, 1000);
  ca.run(10, false);
  await rotated;
  ca.stop();
  clearInterval(keepAlive);
  assert.equal(ca.ca.trustBundle().length, 2);
});
