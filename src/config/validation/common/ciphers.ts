// The TLS cipher suites Envoy (BoringSSL) accepts by name, as Istio's security.ValidCipherSuites;
// used by Gateway/Sidecar server TLS validation and the Gateway API tls-cipher-suites option.
const VALID_CIPHER_SUITES = new Set([
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305",
  "ECDHE-RSA-CHACHA20-POLY1305",
  "ECDHE-ECDSA-AES128-SHA",
  "ECDHE-RSA-AES128-SHA",
  "ECDHE-ECDSA-AES256-SHA",
  "ECDHE-RSA-AES256-SHA",
  "AES128-GCM-SHA256",
  "AES256-GCM-SHA384",
  "AES128-SHA",
  "AES256-SHA",
  "DES-CBC3-SHA",
]);

/** Entries starting with an operator (`-`, `+`, `!`, `[`) are Envoy cipher expressions Istio lets through. */
export function isValidCipherSuite(cs: string): boolean {
  return cs === "" || cs === "ALL" || !/^[\p{L}\p{N}]/u.test(cs) || VALID_CIPHER_SUITES.has(cs);
}
