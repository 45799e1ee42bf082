// The CA's Prometheus metrics under Istio's names (security/pkg/server/ca/monitoring.go), on a
// registry the caller owns.
import { Counter, Gauge, type Registry } from "prom-client";
import type { CaErrorType, CertificateAuthority } from "./ca.ts";
import { splitPemCertificates, x509 } from "./pki.ts";

export class CaMetrics {
  readonly csrs: Counter;
  readonly authenticationFailures: Counter;
  /** By Istio's error type (CSR_ERROR, TTL_ERROR, ...). */
  readonly signErrors: Counter<"error">;
  readonly successes: Counter;

  constructor(registry: Registry, ca: CertificateAuthority) {
    const registers = [registry];
    this.csrs = new Counter({
      name: "citadel_server_csr_count",
      help: "The number of CSRs received by Citadel server.",
      registers,
    });
    this.authenticationFailures = new Counter({
      name: "citadel_server_authentication_failure_count",
      help: "The number of authentication failures.",
      registers,
    });
    this.signErrors = new Counter({
      name: "citadel_server_csr_sign_err_count",
      help: "The number of errors occurred when signing the CSR.",
      labelNames: ["error"],
      registers,
    });
    this.successes = new Counter({
      name: "citadel_server_success_cert_issuance_count",
      help: "The number of certificates issuances that have succeeded.",
      registers,
    });
    // Read at scrape time, so a rotated root shows without anyone updating them.
    const firstRoot = () => ca.trustBundle()[0];
    const firstOfChain = () => splitPemCertificates(ca.bundle.certChainPem)[0];
    expiryGauges(registry, "citadel_server_root_cert", "the root cert", firstRoot);
    // Only a plugged-in CA has a chain; a self-signed one never gains one (Istio records none either).
    if (firstOfChain()) expiryGauges(registry, "citadel_server_cert_chain", "Istio generated cert chain", firstOfChain);
  }

  signError(type: CaErrorType): void {
    this.signErrors.inc({ error: type });
  }
}

/** `<prefix>_expiry_timestamp` and `<prefix>_expiry_seconds` of a certificate. */
function expiryGauges(registry: Registry, prefix: string, what: string, cert: () => string | undefined): void {
  const notAfter = () => {
    const pem = cert();
    return pem ? new x509.X509Certificate(pem).notAfter.getTime() / 1000 : undefined;
  };
  new Gauge({
    name: `${prefix}_expiry_timestamp`,
    help: `The unix timestamp, in seconds, when ${what} will expire.`,
    registers: [registry],
    collect() {
      const at = notAfter();
      if (at !== undefined) this.set(at);
    },
  });
  new Gauge({
    name: `${prefix}_expiry_seconds`,
    help: `The time remaining, in seconds, before ${what} will expire. A negative value indicates the cert is expired.`,
    registers: [registry],
    collect() {
      const at = notAfter();
      if (at !== undefined) this.set(at - Date.now() / 1000);
    },
  });
}
