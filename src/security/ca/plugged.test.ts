import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { verifyChain } from "./ca.ts";
import { createCsr, generateKeyPair, x509 } from "./pki.ts";
import { loadPluggedCa, pluggedCaFiles, reloadPluggedCa } from "./plugged.ts";
import { createIstioCa } from "./setup.ts";
import { FileCaStore } from "./store.ts";

const ALICE = "spiffe://cluster.local/ns/default/sa/alice";
let work: string;
const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: work, stdio: "pipe" }).toString();

/** A cacerts directory as Istio's docs make one: an EC root and an RSA (PKCS#1 key) intermediate. */
function cacertsDir(): string {
  const dir = mkdtempSync(join(work, "cacerts-"));
  for (const f of ["ca-cert.pem", "ca-key.pem", "root-cert.pem"]) copyFileSync(join(work, f), join(dir, f));
  writeFileSync(
    join(dir, "cert-chain.pem"),
    readFileSync(join(work, "ca-cert.pem"), "utf8") + readFileSync(join(work, "root-cert.pem"), "utf8"),
  );
  return dir;
}

before(() => {
  work = mkdtempSync(join(tmpdir(), "sluice-cacerts-"));
  openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "root-key.pem");
  openssl(
    ...["req", "-x509", "-new", "-key", "root-key.pem", "-out", "root-cert.pem", "-days", "30"],
    ...["-subj", "/O=Istio/CN=Root CA", "-addext", "basicConstraints=critical,CA:true"],
    ...["-addext", "keyUsage=critical,keyCertSign,cRLSign"],
  );
  openssl("genrsa", "-traditional", "-out", "ca-key.pem", "2048");
  openssl("req", "-new", "-key", "ca-key.pem", "-out", "ca.csr", "-subj", "/O=Istio/CN=Intermediate CA/L=cluster1");
  writeFileSync(
    join(work, "ca.ext"),
    "basicConstraints=critical,CA:true,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign,digitalSignature\nsubjectKeyIdentifier=hash\n",
  );
  openssl(
    ...["x509", "-req", "-in", "ca.csr", "-CA", "root-cert.pem", "-CAkey", "root-key.pem", "-CAcreateserial"],
    ...["-out", "ca-cert.pem", "-days", "10", "-extfile", "ca.ext"],
  );
});
after(() => rmSync(work, { recursive: true, force: true }));

test("plugged-in certificates: the chain is leaf → intermediate → cert-chain.pem's root → root-cert.pem", async () => {
  const dir = cacertsDir();
  const ca = await loadPluggedCa(pluggedCaFiles(dir));
  const csrPem = await createCsr(await generateKeyPair("ECDSA-P256"), [ALICE]);
  const chain = await ca.signForResponse({ csrPem, subjectIds: [ALICE], ttlSeconds: 3600 });
  const intermediate = readFileSync(join(dir, "ca-cert.pem"), "utf8");
  const root = readFileSync(join(dir, "root-cert.pem"), "utf8");
  // Istio answers the leaf, every certificate of cert-chain.pem, then root-cert.pem's.
  assert.deepEqual(
    chain.slice(1).map((pem) => new X509Certificate(pem).subject),
    ["O=Istio\nCN=Intermediate CA\nL=cluster1", "O=Istio\nCN=Root CA", "O=Istio\nCN=Root CA"],
  );
  assert.equal(chain[1].trim(), intermediate.trim());
  assert.equal(chain.at(-1)?.trim(), root.trim());

  const leaf = new X509Certificate(chain[0]);
  assert.equal(leaf.subjectAltName, `URI:${ALICE}`);
  assert.ok(leaf.checkIssued(new X509Certificate(intermediate)));
  // The leaf's issuer is the intermediate's subject byte for byte (Go's chain building compares bytes).
  const issuer = new x509.X509Certificate(chain[0]).issuerName.toArrayBuffer();
  const subject = new x509.X509Certificate(intermediate).subjectName.toArrayBuffer();
  assert.deepEqual(Buffer.from(issuer), Buffer.from(subject));
  // A leaf never outlives its signing certificate (10 days), and the default TTL fits it.
  assert.equal(verifyChain(chain[0], [intermediate], [root]), undefined);
  writeFileSync(join(work, "leaf.pem"), chain[0]);
  writeFileSync(join(work, "chain.pem"), intermediate);
  assert.match(openssl("verify", "-CAfile", "root-cert.pem", "-untrusted", "chain.pem", "leaf.pem"), /leaf.pem: OK/);
});

test("createIstioCa prefers complete plugged-in certificates and refuses a partial set", async () => {
  const dir = cacertsDir();
  const plugged = await createIstioCa({ trustDomain: "cluster.local", cacertsDir: dir, rootCheckIntervalMs: 0 });
  plugged.stop();
  assert.equal(plugged.kind, "plugged");
  assert.equal(plugged.ca.trustBundle()[0].trim(), readFileSync(join(dir, "root-cert.pem"), "utf8").trim());

  rmSync(join(dir, "ca-key.pem"));
  await assert.rejects(
    createIstioCa({ trustDomain: "cluster.local", cacertsDir: dir, rootCheckIntervalMs: 0 }),
    /^Error: failed to create an istiod CA: incomplete signing CA bundle detected$/,
  );

  await assert.rejects(
    createIstioCa({ trustDomain: "cluster.local", cacertsDir: dir, store: new FileCaStore(`${dir}/`) }),
    /must not be the plugged-in cacerts directory/,
  );

  const empty = mkdtempSync(join(work, "empty-"));
  const selfSigned = await createIstioCa({ trustDomain: "example.org", cacertsDir: empty, rootCheckIntervalMs: 0 });
  assert.equal(selfSigned.kind, "self-signed");
  assert.equal(new X509Certificate(selfSigned.ca.trustBundle()[0]).subject, "O=example.org");
});

test("plugged-in certificates that do not fit are refused", async () => {
  const notCa = cacertsDir();
  // A leaf certificate of the same key, signed by the root, cannot sign.
  writeFileSync(join(work, "leaf.ext"), "basicConstraints=critical,CA:false\n");
  openssl(
    ...["x509", "-req", "-in", "ca.csr", "-CA", "root-cert.pem", "-CAkey", "root-key.pem", "-CAcreateserial"],
    ...["-out", join(notCa, "ca-cert.pem"), "-days", "1", "-extfile", "leaf.ext"],
  );
  await assert.rejects(
    loadPluggedCa(pluggedCaFiles(notCa)),
    /certificate is not authorized to sign other certificates/,
  );

  const wrongKey = cacertsDir();
  copyFileSync(join(work, "root-key.pem"), join(wrongKey, "ca-key.pem"));
  await assert.rejects(loadPluggedCa(pluggedCaFiles(wrongKey)), /the cert does not match the key/);

  // Roots that did not sign the chain.
  const wrongRoot = cacertsDir();
  openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "other.key");
  openssl(
    ...[
      "req",
      "-x509",
      "-key",
      "other.key",
      "-out",
      join(wrongRoot, "root-cert.pem"),
      "-days",
      "1",
      "-subj",
      "/O=Istio/CN=Root CA",
    ],
  );
  writeFileSync(join(wrongRoot, "cert-chain.pem"), readFileSync(join(work, "ca-cert.pem")));
  await assert.rejects(loadPluggedCa(pluggedCaFiles(wrongRoot)), /cannot verify the cert/);
});

test("the kubernetes.io/tls layout (tls.crt, tls.key, ca.crt) is read too", async () => {
  const dir = mkdtempSync(join(work, "tls-"));
  copyFileSync(join(work, "ca-cert.pem"), join(dir, "tls.crt"));
  copyFileSync(join(work, "ca-key.pem"), join(dir, "tls.key"));
  copyFileSync(join(work, "root-cert.pem"), join(dir, "ca.crt"));
  const ca = await loadPluggedCa(pluggedCaFiles(dir));
  const csrPem = await createCsr(await generateKeyPair("ECDSA-P256"), []);
  const chain = await ca.signForResponse({ csrPem, subjectIds: [ALICE], ttlSeconds: 0 });
  assert.equal(chain.length, 4, "leaf, tls.crt and ca.crt as the chain, then ca.crt as the root");
  assert.equal(verifyChain(chain[0], [chain[1]], [chain[3]]), undefined);
});

test("a new intermediate under the same root is picked up; a new root is refused", async () => {
  const dir = cacertsDir();
  const ca = await loadPluggedCa(pluggedCaFiles(dir));
  assert.equal(await reloadPluggedCa(ca, pluggedCaFiles(dir)), "unchanged");

  openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", join(dir, "ca-key.pem"));
  openssl("req", "-new", "-key", join(dir, "ca-key.pem"), "-out", "ca2.csr", "-subj", "/O=Istio/CN=Intermediate CA 2");
  openssl(
    ...["x509", "-req", "-in", "ca2.csr", "-CA", "root-cert.pem", "-CAkey", "root-key.pem", "-CAcreateserial"],
    ...["-out", join(dir, "ca-cert.pem"), "-days", "10", "-extfile", "ca.ext"],
  );
  const intermediate = readFileSync(join(dir, "ca-cert.pem"), "utf8");
  writeFileSync(join(dir, "cert-chain.pem"), intermediate + readFileSync(join(dir, "root-cert.pem"), "utf8"));
  const changes: string[] = [];
  ca.onBundleChange((bundle) => changes.push(bundle.certPem));
  assert.equal(await reloadPluggedCa(ca, pluggedCaFiles(dir)), "updated");
  assert.deepEqual(changes, [intermediate]);
  const csrPem = await createCsr(await generateKeyPair("ECDSA-P256"), []);
  const chain = await ca.signForResponse({ csrPem, subjectIds: [ALICE], ttlSeconds: 0 });
  assert.equal(new X509Certificate(chain[1]).subject, "O=Istio\nCN=Intermediate CA 2");
  assert.equal(verifyChain(chain[0], [chain[1]], [chain.at(-1) ?? ""]), undefined);

  // A different root (here: the intermediate made self-signed) is not taken.
  for (const file of ["root-cert.pem", "ca-cert.pem"]) {
    openssl(
      ...["req", "-x509", "-new", "-key", join(dir, "ca-key.pem"), "-out", join(dir, file)],
      ...["-days", "1", "-subj", "/CN=other"],
    );
  }
  writeFileSync(join(dir, "cert-chain.pem"), "");
  assert.equal(await reloadPluggedCa(ca, pluggedCaFiles(dir)), "roots-changed");
  assert.equal(ca.bundle.certPem, intermediate);
});
