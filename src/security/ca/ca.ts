// The certificate authority (Istio's IstioCA, security/pkg/pki/ca/ca.go): signs CSRs with the
// identities the caller proved, applies Istio's TTL rules, and answers with leaf → intermediates →
// trust bundle. It holds one signing bundle at a time; rotation swaps it and tells listeners.
import { createPublicKey, KeyObject, X509Certificate as NodeCertificate } from "node:crypto";
import { goDurationString } from "../../config/index.ts";
import {
  type CryptoKey,
  createCsr,
  csrIdentities,
  exportPrivateKey,
  generateKeyPair,
  keyAlgorithmOf,
  randomSerial,
  signingAlgorithm,
  splitPemCertificates,
  subjectAltNameExtension,
  x509,
} from "./pki.ts";

/** Istio's CA error types (security/pkg/pki/error); the gRPC service maps them to status codes. */
export type CaErrorType = "CA_NOT_READY" | "CSR_ERROR" | "TTL_ERROR" | "CERT_GEN_ERROR";

export class CaError extends Error {
  constructor(
    readonly type: CaErrorType,
    message: string,
  ) {
    super(message);
  }
}

/** What the CA signs with (Istio's KeyCertBundle), all PEM but the key. */
export interface SigningBundle {
  /** The CA certificate that signs (ca-cert.pem). */
  certPem: string;
  key: CryptoKey;
  /** cert-chain.pem: the chain from the signing certificate up; empty for a self-signed root. */
  certChainPem: string;
  /** root-cert.pem: every root workloads trust, the one anchoring the signing certificate last. */
  rootCertPem: string;
}

export const HOUR_MS = 3_600_000;
/** DEFAULT_WORKLOAD_CERT_TTL. */
export const DEFAULT_WORKLOAD_CERT_TTL_MS = 24 * HOUR_MS;
/** MAX_WORKLOAD_CERT_TTL. */
export const DEFAULT_MAX_WORKLOAD_CERT_TTL_MS = 90 * 24 * HOUR_MS;
/** CITADEL_SELF_SIGNED_CA_CERT_TTL: also the TTL of istiod's own DNS certificate. */
export const DEFAULT_SELF_SIGNED_CA_CERT_TTL_MS = 3650 * 24 * HOUR_MS;
/** Leaves are valid from a little before now, for clocks behind the CA's (Istio's ClockSkewGracePeriod). */
const CLOCK_SKEW_GRACE_MS = 2 * 60_000;

export interface CaOptions {
  /** TTL when the request asks for none (DEFAULT_WORKLOAD_CERT_TTL, 24h). */
  defaultCertTtlMs?: number;
  /** Longer requests are refused (MAX_WORKLOAD_CERT_TTL, 90 days). */
  maxCertTtlMs?: number;
  /** The clock, for tests. */
  now?: () => number;
}

export interface SignRequest {
  csrPem: string;
  /** The certificate's SANs: the caller's proven identities. */
  subjectIds: readonly string[];
  /** Requested lifetime in seconds; ≤ 0 asks for the default. */
  ttlSeconds: number;
  /** Refuse a TTL above the maximum (workload requests); istiod's own certificate skips it. */
  checkLifetime?: boolean;
}

export class CertificateAuthority {
  readonly #defaultTtlMs: number;
  readonly #maxTtlMs: number;
  readonly now: () => number;
  #bundle: SigningBundle;
  #signingCert: x509.X509Certificate;
  readonly #listeners = new Set<(bundle: SigningBundle) => void>();

  private constructor(bundle: SigningBundle, signingCert: x509.X509Certificate, options: CaOptions) {
    this.#bundle = bundle;
    this.#signingCert = signingCert;
    this.#defaultTtlMs = options.defaultCertTtlMs ?? DEFAULT_WORKLOAD_CERT_TTL_MS;
    this.#maxTtlMs = options.maxCertTtlMs ?? DEFAULT_MAX_WORKLOAD_CERT_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  /** A CA over a bundle that must verify (Istio's NewVerifiedKeyCertBundleFromPem). */
  static create(bundle: SigningBundle, options: CaOptions = {}): CertificateAuthority {
    const signingCert = verifyBundle(bundle, options.now?.() ?? Date.now());
    return new CertificateAuthority(bundle, signingCert, options);
  }

  get bundle(): SigningBundle {
    return this.#bundle;
  }

  /** Swaps in a new bundle after verifying it (Istio's VerifyAndSetAll), then tells the listeners. */
  setBundle(bundle: SigningBundle): void {
    this.#signingCert = verifyBundle(bundle, this.now());
    this.#bundle = bundle;
    for (const listener of this.#listeners) listener(bundle);
  }

  /** Called after every bundle change (root rotation, reload); returns the unsubscribe function. */
  onBundleChange(listener: (bundle: SigningBundle) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The roots workloads should trust, one PEM each (SDS ROOTCA, the agent's root-cert.pem). */
  trustBundle(): string[] {
    return splitPemCertificates(this.#bundle.rootCertPem);
  }

  /** Signs a CSR: the leaf PEM (Istio's IstioCA.sign). */
  async sign(req: SignRequest): Promise<string> {
    let csr: x509.Pkcs10CertificateRequest;
    if (!req.csrPem.includes("-----BEGIN ")) {
      throw new CaError("CSR_ERROR", "certificate signing request is not properly encoded");
    }
    try {
      csr = new x509.Pkcs10CertificateRequest(req.csrPem);
    } catch {
      throw new CaError("CSR_ERROR", "failed to parse X.509 certificate signing request");
    }
    if (!(await csr.verify().catch(() => false))) {
      throw new CaError("CSR_ERROR", "the certificate signing request signature is invalid");
    }
    // A CSR may name no identity or only the caller's own (Istio's ValidateCSR): asking for
    // another is refused rather than silently rewritten.
    if (!csrIdentities(csr).every((id) => req.subjectIds.includes(id))) {
      throw new CaError("CSR_ERROR", "unable to validate SAN Identities in CSR");
    }
    const requestedMs = req.ttlSeconds * 1000;
    if ((req.checkLifetime ?? true) && requestedMs > this.#maxTtlMs) {
      const requested = goDurationString(BigInt(req.ttlSeconds) * 1_000_000_000n);
      const max = goDurationString(BigInt(this.#maxTtlMs) * 1_000_000n);
      throw new CaError("TTL_ERROR", `requested TTL ${requested} is greater than the max allowed TTL ${max}`);
    }
    const lifetimeMs = requestedMs > 0 ? requestedMs : this.#defaultTtl();
    const now = this.now();
    const signingCert = this.#signingCert;
    if (now >= signingCert.notAfter.getTime()) {
      throw new CaError("CERT_GEN_ERROR", `signing certificate has expired at ${signingCert.notAfter.toISOString()}`);
    }
    // A leaf never outlives the certificate that signed it.
    const notAfter = Math.min(now + lifetimeMs, signingCert.notAfter.getTime());
    const extensions: x509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      subjectAltNameExtension(req.subjectIds),
    ];
    const issuerKeyId = signingCert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
    if (issuerKeyId) extensions.push(new x509.AuthorityKeyIdentifierExtension(issuerKeyId));
    try {
      const leaf = await x509.X509CertificateGenerator.create({
        serialNumber: randomSerial(),
        subject: leafSubject(csr, req.subjectIds),
        issuer: signingCert.subjectName,
        notBefore: new Date(now - CLOCK_SKEW_GRACE_MS),
        notAfter: new Date(notAfter),
        publicKey: csr.publicKey,
        signingKey: this.#bundle.key,
        signingAlgorithm: signingAlgorithm(this.#bundle.key),
        extensions,
      });
      return leaf.toString("pem") + "\n";
    } catch (err) {
      throw new CaError("CERT_GEN_ERROR", err instanceof Error ? err.message : String(err));
    }
  }

  /**
   * The CreateCertificate answer: the leaf, each certificate of cert-chain.pem, then each root,
   * one PEM per element (Istio's server.go; the trust bundle's anchoring root comes last).
   */
  async signForResponse(req: SignRequest): Promise<string[]> {
    const leaf = await this.sign(req);
    return [leaf, ...splitPemCertificates(this.#bundle.certChainPem), ...this.trustBundle()];
  }

  /**
   * A key and certificate for the CA's own host names (Istio's GenKeyCert, used for istiod's DNS
   * certificate): a fresh key of the CA key's type, signed without the workload TTL limit.
   */
  async generateKeyCert(hosts: readonly string[], ttlMs: number): Promise<{ certChainPem: string; keyPem: string }> {
    const keys = await generateKeyPair(keyAlgorithmOf(this.#bundle.key));
    const leaf = await this.sign({
      csrPem: await createCsr(keys, []),
      subjectIds: hosts,
      ttlSeconds: Math.floor(ttlMs / 1000),
      checkLifetime: false,
    });
    return { certChainPem: leaf + this.#bundle.certChainPem, keyPem: await exportPrivateKey(keys.privateKey) };
  }

  /** The default TTL, shortened to what is left of the CA's certificate chain (Istio's minTTL). */
  #defaultTtl(): number {
    const first = splitPemCertificates(this.#bundle.certChainPem)[0];
    if (!first) return this.#defaultTtlMs;
    const left = new x509.X509Certificate(first).notAfter.getTime() - this.now();
    return Math.min(this.#defaultTtlMs, Math.max(left, 0));
  }
}

/** CN only when the CSR asks for one: the first identity, if short enough (Istio's dual use). */
function leafSubject(csr: x509.Pkcs10CertificateRequest, subjectIds: readonly string[]): string {
  const first = subjectIds[0];
  if (!csr.subjectName.getField("CN").length || !first || first.length > 64) return "";
  return new x509.Name([{ CN: [first] }]).toString();
}

/**
 * Checks a bundle as Istio's KeyCertBundle.Verify does: the signing certificate chains through
 * cert-chain.pem to one of the roots, and the key is its key. Returns the parsed signing certificate.
 */
function verifyBundle(bundle: SigningBundle, now: number): x509.X509Certificate {
  const [certPem] = splitPemCertificates(bundle.certPem);
  if (!certPem) throw new Error("failed to parse cert PEM: no certificate");
  const roots = splitPemCertificates(bundle.rootCertPem);
  const chainError = verifyChain(certPem, splitPemCertificates(bundle.certChainPem), roots, now);
  if (chainError) {
    throw new Error(`cannot verify the cert with the provided root chain and cert pool with error: ${chainError}`);
  }
  const publicKey = new NodeCertificate(certPem).publicKey;
  const privateKey = KeyObject.from(bundle.key);
  const spki = (key: KeyObject) => key.export({ format: "der", type: "spki" });
  if (!spki(publicKey).equals(spki(createPublicKey(privateKey)))) throw new Error("the cert does not match the key");
  return new x509.X509Certificate(certPem);
}

/**
 * Verifies `certPem` up to one of `roots` through `intermediates` (signatures, issuer names and
 * validity at `now`). Returns why it does not, or undefined.
 */
export function verifyChain(
  certPem: string,
  intermediates: readonly string[],
  roots: readonly string[],
  now = Date.now(),
): string | undefined {
  const parse = (pems: readonly string[]) => pems.map((p) => new NodeCertificate(p));
  const rootCerts = parse(roots);
  const pool = [...parse(intermediates), ...rootCerts];
  const valid = (c: NodeCertificate) => Date.parse(c.validFrom) <= now && now <= Date.parse(c.validTo);
  let current = new NodeCertificate(certPem);
  for (let depth = 0; depth < 10; depth++) {
    if (!valid(current)) return `certificate ${current.subject || current.serialNumber} is not valid now`;
    if (rootCerts.some((r) => r.raw.equals(current.raw))) return undefined;
    const issuer = pool.find((p) => p.ca && current.checkIssued(p) && current.verify(p.publicKey) && valid(p));
    if (!issuer) return "certificate signed by unknown authority";
    current = issuer;
  }
  return "certificate chain too long";
}
