// The workload certificate (Istio's SecretManagerClient with OUTPUT_CERTS): a fresh key made here
// (it never leaves the workload), a CSR for the workload's SPIFFE id signed by the CA, the result kept
// in memory for SDS and written to cert-chain.pem / key.pem / root-cert.pem for gRPC's file_watcher
// provider. Renewed at half life (SECRET_GRACE_PERIOD_RATIO, with jitter); a failed request is retried
// with backoff while the old certificate stays in place until it expires.
import { X509Certificate } from "node:crypto";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import {
  createCsr,
  exportPrivateKey,
  generateKeyPair,
  type KeyAlgorithm,
  splitPemCertificates,
} from "../security/ca/index.ts";
import type { Env } from "./node.ts";

export const CERT_CHAIN_FILE = "cert-chain.pem";
export const KEY_FILE = "key.pem";
export const ROOT_CERT_FILE = "root-cert.pem";

/** SECRET_TTL: what the agent asks the CA for. */
export const DEFAULT_SECRET_TTL_SECONDS = 24 * 3600;
/** SECRET_GRACE_PERIOD_RATIO: renew once this fraction of the lifetime is left. */
export const DEFAULT_GRACE_PERIOD_RATIO = 0.5;
/** SECRET_GRACE_PERIOD_RATIO_JITTER: spreads a fleet's renewals. */
export const DEFAULT_GRACE_PERIOD_RATIO_JITTER = 0.01;

/** Signs a CSR: the chain leaf → intermediates → roots (a CaClient, or the CA itself in tests). */
export type CsrSigner = (csrPem: string, ttlSeconds: number) => Promise<string[]>;

export interface WorkloadSecret {
  /** The whole chain as the CA answered it, leaf first. */
  certChainPem: string;
  keyPem: string;
  /** The roots to trust for peers: the self-signed certificates of the answer (all of them during a root overlap). */
  rootCertPem: string;
  /** When it was fetched: its lifetime for renewal counts from here, as Istio's CreatedTime. */
  createdAt: number;
  expiresAt: number;
}

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

export interface WorkloadCertificatesOptions {
  /** The SPIFFE id the CSR asks for. */
  identity: string;
  sign: CsrSigner;
  /** OUTPUT_CERTS; nothing is written when absent (SDS only). */
  outputDir?: string;
  ttlSeconds?: number;
  keyAlgorithm?: KeyAlgorithm;
  graceRatio?: number;
  graceRatioJitter?: number;
  backoff?: BackoffOptions;
  log: Logger;
  /** For tests: the source of the rotation jitter, in [0, 1). */
  random?: () => number;
}

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 30_000 };

/**
 * Milliseconds from `now` until a secret should be renewed: when `ratio ± jitter` of its lifetime
 * (from fetch to expiry) is left, never negative (Istio's rotateTime).
 */
export function rotationDelayMs(
  secret: Pick<WorkloadSecret, "createdAt" | "expiresAt">,
  now: number,
  ratio: number,
  jitter: number,
  random: () => number,
): number {
  const jittered = Math.min(1, Math.max(0, ratio + (random() * 2 - 1) * jitter));
  const renewAt = secret.expiresAt - jittered * (secret.expiresAt - secret.createdAt);
  return Math.max(0, renewAt - now);
}

/** The roots of a CA answer: its self-signed certificates, else its last one (Istio takes the last). */
export function rootsOfChain(chain: readonly string[]): string[] {
  const certs = chain.flatMap((pem) => splitPemCertificates(pem));
  const roots = certs.slice(1).filter((pem) => {
    const cert = new X509Certificate(pem);
    return cert.issuer === cert.subject && cert.verify(cert.publicKey);
  });
  if (roots.length > 0) return roots;
  const last = certs.at(-1);
  return last ? [last] : [];
}

/** Writes a file by rename, so a reader sees the old or the new content, never half of one. */
function writeAtomically(path: string, content: string, mode: number): void {
  const temp = `${path}.tmp-${process.pid}`;
  writeFileSync(temp, content, { mode });
  renameSync(temp, path);
}

/** Writes the three files; the key readable by the owner only. */
export function writeSecretFiles(dir: string, secret: WorkloadSecret): void {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  // Key first, chain next, as Istio writes them: the pair a reader loads matches except across one rename.
  writeAtomically(join(dir, KEY_FILE), secret.keyPem, 0o600);
  writeAtomically(join(dir, CERT_CHAIN_FILE), secret.certChainPem, 0o644);
  writeAtomically(join(dir, ROOT_CERT_FILE), secret.rootCertPem, 0o644);
}

/** The key algorithm pilot-agent uses: ECDSA when ECC_SIGNATURE_ALGORITHM=ECDSA, else RSA 2048. */
export function keyAlgorithmFromEnv(env: Env): KeyAlgorithm {
  return env.ECC_SIGNATURE_ALGORITHM?.toUpperCase() === "ECDSA" ? "ECDSA-P256" : "RSA-2048";
}

/** The SPIFFE id pilot-agent asks for: spiffe://<TRUST_DOMAIN>/ns/<POD_NAMESPACE>/sa/<SERVICE_ACCOUNT>. */
export function workloadIdentity(env: Env): string {
  const namespace = env.POD_NAMESPACE || "default";
  const account = env.SERVICE_ACCOUNT || "default";
  return `spiffe://${env.TRUST_DOMAIN || "cluster.local"}/ns/${namespace}/sa/${account}`;
}

type SecretListener = (secret: WorkloadSecret) => void;

export class WorkloadCertificates {
  #current?: WorkloadSecret;
  readonly #listeners = new Set<SecretListener>();
  #timer?: NodeJS.Timeout;
  #stopped = false;
  #first?: Promise<WorkloadSecret>;
  #stopReject?: (err: Error) => void;

  constructor(private readonly options: WorkloadCertificatesOptions) {}

  get current(): WorkloadSecret | undefined {
    return this.#current;
  }

  /** Called with every new secret (the first included); returns the unsubscribe. */
  onUpdate(listener: SecretListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts fetching (retrying until it succeeds) and renewing; settles with the first secret. */
  start(): Promise<WorkloadSecret> {
    if (!this.#first) {
      this.#first = new Promise((resolve, reject) => {
        const unsubscribe = this.onUpdate((secret) => {
          unsubscribe();
          resolve(secret);
        });
        this.#stopReject = reject;
      });
      void this.#renew(0);
    }
    return this.#first;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#stopReject?.(new Error("stopped before a certificate was fetched"));
  }

  /** Fetches a new secret now; on failure tries again after a growing pause (`attempt` counts failures). */
  async #renew(attempt: number): Promise<void> {
    if (this.#stopped) return;
    const { log } = this.options;
    try {
      const secret = await this.#fetch();
      if (this.#stopped) return;
      this.#current = secret;
      if (this.options.outputDir) writeSecretFiles(this.options.outputDir, secret);
      const delay = rotationDelayMs(
        secret,
        Date.now(),
        this.options.graceRatio ?? DEFAULT_GRACE_PERIOD_RATIO,
        this.options.graceRatioJitter ?? DEFAULT_GRACE_PERIOD_RATIO_JITTER,
        this.options.random ?? Math.random,
      );
      log.info(
        { identity: this.options.identity, expires: new Date(secret.expiresAt).toISOString(), renewInMs: delay },
        "workload certificate issued",
      );
      for (const listener of this.#listeners) listener(secret);
      this.#schedule(delay, 0);
    } catch (err) {
      if (this.#stopped) return;
      const backoff = this.options.backoff ?? DEFAULT_BACKOFF;
      const delay = Math.min(backoff.maxMs, backoff.initialMs * 2 ** attempt);
      // The old certificate (if any) stays in place until it expires.
      log.warn(
        {
          err: err instanceof Error ? err.message : String(err),
          retryInMs: delay,
          currentExpires: this.#current && new Date(this.#current.expiresAt).toISOString(),
        },
        "workload certificate request failed",
      );
      this.#schedule(delay, attempt + 1);
    }
  }

  #schedule(delayMs: number, attempt: number): void {
    clearTimeout(this.#timer);
    // Timers hold at most 2^31-1 ms (~24.8 days); a longer wait re-arms itself.
    const step = Math.min(delayMs, 2 ** 31 - 1);
    this.#timer = setTimeout(() => {
      if (step < delayMs) this.#schedule(delayMs - step, attempt);
      else void this.#renew(attempt);
    }, step);
  }

  async #fetch(): Promise<WorkloadSecret> {
    const keys = await generateKeyPair(this.options.keyAlgorithm ?? "ECDSA-P256");
    const csr = await createCsr(keys, [this.options.identity]);
    const createdAt = Date.now();
    const chain = await this.options.sign(csr, this.options.ttlSeconds ?? DEFAULT_SECRET_TTL_SECONDS);
    const certs = chain.flatMap((pem) => splitPemCertificates(pem));
    const leaf = certs[0];
    if (!leaf) throw new Error("the CA answered without a certificate");
    const roots = rootsOfChain(certs);
    if (roots.length === 0) throw new Error("the CA answered without a root certificate");
    return {
      certChainPem: certs.join(""),
      keyPem: await exportPrivateKey(keys.privateKey),
      rootCertPem: roots.join(""),
      createdAt,
      expiresAt: Date.parse(new X509Certificate(leaf).validTo),
    };
  }
}
