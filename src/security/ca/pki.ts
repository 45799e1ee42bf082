// X.509 plumbing of the CA: @peculiar/x509 on node's WebCrypto for certificates and CSRs, node's
// KeyObject for reading private keys in any PEM form (PKCS#1, SEC1, PKCS#8), as Istio's
// security/pkg/pki/util does with Go's crypto/x509.
import "reflect-metadata";
import { createPrivateKey, createPublicKey, KeyObject, randomBytes, webcrypto } from "node:crypto";
import { isIP } from "node:net";
import * as x509 from "@peculiar/x509";

// @peculiar/x509 picks up Node's global WebCrypto (globalThis.crypto) by itself.

export { x509 };
export type CryptoKey = webcrypto.CryptoKey;
export type CryptoKeyPair = webcrypto.CryptoKeyPair;
type SignatureParams = webcrypto.Algorithm | webcrypto.EcdsaParams;

/** Key types the CA generates: Sluice's default ECDSA P-256, or Istio's RSA 2048. */
export type KeyAlgorithm = "ECDSA-P256" | "RSA-2048";

/** OID of the subjectAltName extension. */
const SAN_OID = "2.5.29.17";

export async function generateKeyPair(algorithm: KeyAlgorithm): Promise<CryptoKeyPair> {
  const params =
    algorithm === "ECDSA-P256"
      ? { name: "ECDSA", namedCurve: "P-256" }
      : { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" };
  return (await webcrypto.subtle.generateKey(params, true, ["sign", "verify"])) as CryptoKeyPair;
}

/** The key type of an existing key, so keys the CA makes for itself match its own (Istio's GenKeyCert). */
export function keyAlgorithmOf(key: CryptoKey): KeyAlgorithm {
  return key.algorithm.name === "ECDSA" ? "ECDSA-P256" : "RSA-2048";
}

/** The signature algorithm for a signing key: SHA-384 for P-384 keys and SHA-256 otherwise, as Go picks. */
export function signingAlgorithm(key: CryptoKey): SignatureParams {
  if (key.algorithm.name === "ECDSA") {
    const curve = (key.algorithm as webcrypto.EcKeyAlgorithm).namedCurve;
    return { name: "ECDSA", hash: curve === "P-384" ? "SHA-384" : "SHA-256" } as webcrypto.EcdsaParams;
  }
  return { name: key.algorithm.name };
}

/** Reads a PEM private key (RSA, EC P-256 or P-384) as a WebCrypto signing key. */
export async function importPrivateKey(pem: string): Promise<CryptoKey> {
  const key = createPrivateKey(pem);
  const der = key.export({ format: "der", type: "pkcs8" });
  let params: webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams;
  if (key.asymmetricKeyType === "rsa") {
    params = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  } else if (key.asymmetricKeyType === "ec") {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    const namedCurve = curve === "prime256v1" ? "P-256" : curve === "secp384r1" ? "P-384" : undefined;
    if (!namedCurve) throw new Error(`unsupported elliptic curve ${curve}`);
    params = { name: "ECDSA", namedCurve };
  } else {
    throw new Error(`unsupported private key type ${key.asymmetricKeyType}`);
  }
  return webcrypto.subtle.importKey("pkcs8", der, params, true, ["sign"]);
}

/** The public half of a private key (a root renewed on the same key needs it). */
export async function publicKeyOf(privateKey: CryptoKey): Promise<CryptoKey> {
  const spki = createPublicKey(KeyObject.from(privateKey)).export({ format: "der", type: "spki" });
  const params = privateKey.algorithm as webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams;
  return webcrypto.subtle.importKey("spki", spki, params, true, ["verify"]);
}

/** A private key as PKCS#8 PEM ("PRIVATE KEY"), which Istio's ParsePemEncodedKey also reads. */
export async function exportPrivateKey(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey("pkcs8", key);
  return x509.PemConverter.encode(der, "PRIVATE KEY");
}

/** Each certificate of a PEM bundle as its own PEM block ending in "\n" (Istio's PemCertBytestoString + "\n"). */
export function splitPemCertificates(pem: string): string[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => `${block}\n`);
}

/** A positive random 128-bit serial number (Go's rand.Int below 2^128), as hex. */
export function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f;
  return bytes.toString("hex");
}

/** Identities as a subjectAltName: spiffe:// → URI, IP literals → IP, the rest DNS (Istio's BuildSubjectAltNameExtension). */
export function subjectAltNameExtension(identities: readonly string[]): x509.SubjectAlternativeNameExtension {
  const names = identities.map((id) => {
    if (id.startsWith("spiffe://")) return { type: "url" as const, value: id };
    if (isIP(id) !== 0) return { type: "ip" as const, value: id };
    return { type: "dns" as const, value: id };
  });
  // Critical because the subject is empty (X.509 and SPIFFE).
  return new x509.SubjectAlternativeNameExtension(names, true);
}

/** The URI, DNS and IP values of a CSR's subjectAltName (Istio's ExtractIDs). */
export function csrIdentities(csr: x509.Pkcs10CertificateRequest): string[] {
  const ids: string[] = [];
  for (const ext of csr.extensions) {
    if (ext.type !== SAN_OID) continue;
    for (const name of new x509.SubjectAlternativeNameExtension(ext.rawData).names.toJSON()) ids.push(name.value);
  }
  return ids;
}

/**
 * A PEM CSR for `identities` signed by `keys` (what a workload sends, Istio's GenCSR): O= empty
 * and the identities as SANs; the private key never leaves the caller.
 */
export async function createCsr(keys: CryptoKeyPair, identities: readonly string[]): Promise<string> {
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: "O=",
    keys,
    signingAlgorithm: signingAlgorithm(keys.privateKey),
    extensions: identities.length > 0 ? [subjectAltNameExtension(identities)] : [],
  });
  return csr.toString("pem");
}
