// The self-signed CA (Istio's NewSelfSignedIstioCAOptions and SelfSignedCARootCertRotator): a root
// made on first start and kept in a CaSecretStore, reloaded on restart, and renewed when little of
// its life is left. A replaced root stays in the trust bundle for an overlap window, so certificates
// it signed keep verifying while workloads pick up the new root.
import { X509Certificate as NodeCertificate } from "node:crypto";
import { type Logger, pino } from "pino";
import { type CaOptions, CertificateAuthority, DEFAULT_SELF_SIGNED_CA_CERT_TTL_MS, type SigningBundle } from "./ca.ts";
import {
  type CryptoKeyPair,
  exportPrivateKey,
  generateKeyPair,
  importPrivateKey,
  type KeyAlgorithm,
  keyAlgorithmOf,
  publicKeyOf,
  randomSerial,
  signingAlgorithm,
  splitPemCertificates,
  x509,
} from "./pki.ts";
import type { CaSecretData, CaSecretStore } from "./store.ts";

export interface SelfSignedCaOptions extends CaOptions {
  store: CaSecretStore;
  /** The root's organization, O= (Istio uses the trust domain). */
  org: string;
  /** Key type of a new root; default ECDSA P-256 (Istio's is RSA 2048). */
  keyAlgorithm?: KeyAlgorithm;
  /** CITADEL_SELF_SIGNED_CA_CERT_TTL, default 10 years. */
  rootTtlMs?: number;
  /** Renew when less than this percentage of the root's lifetime is left (CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE, 20). */
  gracePeriodPercentile?: number;
  /** How long a replaced root stays trusted after a rotation; default until it expires. */
  rootOverlapMs?: number;
  log?: Logger;
}

export type RotationResult = "rotated" | "reloaded" | "unchanged";

export class SelfSignedCa {
  readonly ca: CertificateAuthority;
  readonly #options: SelfSignedCaOptions;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | undefined;

  private constructor(ca: CertificateAuthority, options: SelfSignedCaOptions, log: Logger) {
    this.ca = ca;
    this.#options = options;
    this.#log = log;
  }

  /** Loads the root from the store, or makes one and stores it (another replica's wins a race). */
  static async start(options: SelfSignedCaOptions): Promise<SelfSignedCa> {
    const log = options.log ?? pino({ level: "silent" });
    const now = options.now?.() ?? Date.now();
    let data = await options.store.load();
    if (data) {
      log.info({ store: options.store.location }, "CA: loaded the self-signed root");
    } else {
      const keys = await generateKeyPair(options.keyAlgorithm ?? "ECDSA-P256");
      const certPem = await createRoot(keys, options.org, now, options.rootTtlMs ?? DEFAULT_SELF_SIGNED_CA_CERT_TTL_MS);
      const fresh = {
        "ca-cert.pem": certPem,
        "ca-key.pem": await exportPrivateKey(keys.privateKey),
        "root-cert.pem": certPem,
      };
      if (await options.store.create(fresh)) {
        data = fresh;
        log.info({ store: options.store.location, org: options.org }, "CA: created a self-signed root");
      } else {
        data = await options.store.load();
        if (!data) throw new Error(`CA: ${options.store.location} exists but cannot be read`);
      }
    }
    const ca = CertificateAuthority.create(await bundleFromSecret(data, now, options.rootOverlapMs), options);
    return new SelfSignedCa(ca, options, log);
  }

  /**
   * One turn of Istio's rotator: renew the root if it is within its grace period, else pick up
   * what another replica stored and drop old roots whose overlap is over.
   */
  async checkAndRotate(): Promise<RotationResult> {
    const data = await this.#options.store.load();
    if (!data) {
      this.#log.error({ store: this.#options.store.location }, "CA: the root is gone from its store; not rotating");
      return "unchanged";
    }
    const now = this.ca.now();
    const root = new NodeCertificate(data["ca-cert.pem"]);
    const notBefore = Date.parse(root.validFrom);
    const notAfter = Date.parse(root.validTo);
    const grace = ((notAfter - notBefore) * (this.#options.gracePeriodPercentile ?? 20)) / 100;
    if (notAfter - now > grace) {
      const wanted = await bundleFromSecret(data, now, this.#options.rootOverlapMs);
      const current = this.ca.bundle;
      if (wanted.certPem === current.certPem && wanted.rootCertPem === current.rootCertPem) return "unchanged";
      this.ca.setBundle(wanted);
      this.#log.info({ store: this.#options.store.location }, "CA: reloaded the root from its store");
      return "reloaded";
    }
    await this.#rotate(data, false);
    return "rotated";
  }

  /**
   * Replaces the root now. Istio renews on the same key, so old and new roots verify each other's
   * certificates; `newKey` makes a new key too, and then only the overlap keeps old leaves valid.
   */
  async rotate(options: { newKey?: boolean } = {}): Promise<void> {
    const data = await this.#options.store.load();
    if (!data) throw new Error(`CA: ${this.#options.store.location} is empty`);
    await this.#rotate(data, options.newKey ?? false);
  }

  /**
   * Runs checkAndRotate every `intervalMs` (CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL, 1h) until
   * stop(). With `jitter` (CITADEL_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR) the first check waits a
   * random part of an interval more, so replicas started together do not rotate together.
   */
  run(intervalMs: number, jitter = true): void {
    this.stop();
    const check = () => {
      this.checkAndRotate().catch((err: unknown) =>
        this.#log.error({ err: err instanceof Error ? err.message : String(err) }, "CA: root rotation failed"),
      );
    };
    const every = () => {
      this.#timer = setInterval(check, intervalMs);
      this.#timer.unref();
    };
    if (jitter) {
      this.#timer = setTimeout(every, Math.floor(Math.random() * intervalMs));
      this.#timer.unref();
    } else {
      every();
    }
  }

  stop(): void {
    clearTimeout(this.#timer);
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #rotate(data: CaSecretData, newKey: boolean): Promise<void> {
    const now = this.ca.now();
    const oldKey = await importPrivateKey(data["ca-key.pem"]);
    const keys: CryptoKeyPair = newKey
      ? await generateKeyPair(keyAlgorithmOf(oldKey))
      : { privateKey: oldKey, publicKey: await publicKeyOf(oldKey) };
    // The old root's organization wins over the configured one (Istio's MergeCertOptions).
    const org = new x509.X509Certificate(data["ca-cert.pem"]).subjectName.getField("O")[0] ?? this.#options.org;
    const certPem = await createRoot(keys, org, now, this.#options.rootTtlMs ?? DEFAULT_SELF_SIGNED_CA_CERT_TTL_MS);
    const rotated: CaSecretData = {
      "ca-cert.pem": certPem,
      "ca-key.pem": newKey ? await exportPrivateKey(keys.privateKey) : data["ca-key.pem"],
      // Roots still trusted now (their own overlap not over), then the new one.
      "root-cert.pem": (await bundleFromSecret(data, now, this.#options.rootOverlapMs)).rootCertPem + certPem,
    };
    const bundle = await bundleFromSecret(rotated, now, this.#options.rootOverlapMs);
    await this.#options.store.update(rotated);
    this.ca.setBundle(bundle);
    this.#log.info(
      { store: this.#options.store.location, newKey, notAfter: new NodeCertificate(certPem).validTo },
      "CA: rotated the self-signed root",
    );
  }
}

/** A self-signed CA certificate (Istio's CertOptions{IsCA, IsSelfSigned, Org}). */
async function createRoot(keys: CryptoKeyPair, org: string, now: number, ttlMs: number): Promise<string> {
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: new x509.Name([{ O: [org] }]),
    keys,
    notBefore: new Date(now),
    notAfter: new Date(now + ttlMs),
    signingAlgorithm: signingAlgorithm(keys.privateKey),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return cert.toString("pem") + "\n";
}

/**
 * The signing bundle of a stored root: the current root signs; the trust bundle keeps earlier
 * roots that have not expired while the overlap since the current root was made lasts.
 */
async function bundleFromSecret(data: CaSecretData, now: number, overlapMs?: number): Promise<SigningBundle> {
  const [certPem] = splitPemCertificates(data["ca-cert.pem"]);
  if (!certPem) throw new Error("CA: the stored ca-cert.pem holds no certificate");
  const rotatedAt = Date.parse(new NodeCertificate(certPem).validFrom);
  const overlapOver = overlapMs !== undefined && now >= rotatedAt + overlapMs;
  const older = splitPemCertificates(data["root-cert.pem"]).filter(
    (pem) => pem !== certPem && !overlapOver && Date.parse(new NodeCertificate(pem).validTo) > now,
  );
  return {
    certPem,
    key: await importPrivateKey(data["ca-key.pem"]),
    certChainPem: "",
    rootCertPem: [...older, certPem].join(""),
  };
}
