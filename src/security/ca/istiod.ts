// istiod's own serving certificate from its CA (Istio's initDNSCertsIstiod, PILOT_CERT_PROVIDER=istiod):
// DNS SANs `istiod.<ns>.svc` and friends, reissued whenever the CA's roots change. It is a grpc-js
// CertificateProvider, so the TLS port (15012) serves it and verifies client certificates against
// the trust bundle without files; the webhook port (15017) can read `current`.
import type { experimental } from "@grpc/grpc-js";
import { type Logger, pino } from "pino";
import { type CertificateAuthority, DEFAULT_SELF_SIGNED_CA_CERT_TTL_MS } from "./ca.ts";

type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

export interface IstiodDnsNameOptions {
  /** The system namespace istiod runs in. */
  namespace: string;
  /** A revision other than "default" adds `istiod-<revision>.<ns>.svc`. */
  revision?: string;
  /** ISTIOD_CUSTOM_HOST, comma-separated, plus the pod's own host name if known. */
  customHosts?: readonly string[];
}

/** Istio's getDNSNames: the known service names in the namespace plus custom hosts, sorted. */
export function istiodDnsNames(options: IstiodDnsNameOptions): string[] {
  const known = ["istiod", "istiod-remote", "istio-pilot"];
  if (options.revision && options.revision !== "default") known.push(`istiod-${options.revision}`);
  const names = new Set([...(options.customHosts ?? []), ...known.map((h) => `${h}.${options.namespace}.svc`)]);
  names.delete("");
  return [...names].sort();
}

export interface IstiodKeyCert {
  /** The leaf, then the CA's chain (not the roots). */
  certChainPem: string;
  keyPem: string;
  /** The roots clients verify istiod with, and istiod verifies client certificates with. */
  caBundlePem: string;
}

export class IstiodCertificate implements experimental.CertificateProvider {
  readonly #ca: CertificateAuthority;
  readonly #dnsNames: readonly string[];
  readonly #ttlMs: number;
  readonly #log: Logger;
  readonly #caListeners = new Set<CaListener>();
  readonly #identityListeners = new Set<IdentityListener>();
  readonly #unsubscribe: () => void;
  #current: IstiodKeyCert;

  private constructor(
    ca: CertificateAuthority,
    dnsNames: readonly string[],
    ttlMs: number,
    current: IstiodKeyCert,
    log: Logger,
  ) {
    this.#ca = ca;
    this.#dnsNames = dnsNames;
    this.#ttlMs = ttlMs;
    this.#current = current;
    this.#log = log;
    // A new root means a new istiod certificate (Istio's updateRootCertAndGenKeyCert).
    this.#unsubscribe = ca.onBundleChange(() => {
      this.reissue().catch((err: unknown) =>
        this.#log.error(
          { err: err instanceof Error ? err.message : String(err) },
          "CA: cannot reissue istiod's certificate",
        ),
      );
    });
  }

  /** Issues the certificate; its TTL is the self-signed root's (CITADEL_SELF_SIGNED_CA_CERT_TTL), as Istio's. */
  static async issue(
    ca: CertificateAuthority,
    dnsNames: readonly string[],
    options: { ttlMs?: number; log?: Logger } = {},
  ): Promise<IstiodCertificate> {
    const ttlMs = options.ttlMs ?? DEFAULT_SELF_SIGNED_CA_CERT_TTL_MS;
    const current = await keyCert(ca, dnsNames, ttlMs);
    const log = options.log ?? pino({ level: "silent" });
    log.info({ dnsNames }, "CA: issued istiod's certificate");
    return new IstiodCertificate(ca, dnsNames, ttlMs, current, log);
  }

  get current(): IstiodKeyCert {
    return this.#current;
  }

  async reissue(): Promise<void> {
    this.#current = await keyCert(this.#ca, this.#dnsNames, this.#ttlMs);
    this.#log.info({ dnsNames: this.#dnsNames }, "CA: reissued istiod's certificate");
    for (const listener of this.#identityListeners) listener(this.#identityUpdate());
    for (const listener of this.#caListeners) listener(this.#caUpdate());
  }

  /** Stops following the CA's root changes. */
  close(): void {
    this.#unsubscribe();
  }

  // grpc-js registers its watcher only after adding the listener, so the first update is sent later.
  addCaCertificateListener(listener: CaListener): void {
    this.#caListeners.add(listener);
    queueMicrotask(() => this.#caListeners.has(listener) && listener(this.#caUpdate()));
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.#caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.add(listener);
    queueMicrotask(() => this.#identityListeners.has(listener) && listener(this.#identityUpdate()));
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.delete(listener);
  }

  #caUpdate(): experimental.CaCertificateUpdate {
    return { caCertificate: Buffer.from(this.#current.caBundlePem) };
  }

  #identityUpdate(): experimental.IdentityCertificateUpdate {
    return { certificate: Buffer.from(this.#current.certChainPem), privateKey: Buffer.from(this.#current.keyPem) };
  }
}

async function keyCert(ca: CertificateAuthority, dnsNames: readonly string[], ttlMs: number): Promise<IstiodKeyCert> {
  const { certChainPem, keyPem } = await ca.generateKeyCert(dnsNames, ttlMs);
  return { certChainPem, keyPem, caBundlePem: ca.trustBundle().join("") };
}
