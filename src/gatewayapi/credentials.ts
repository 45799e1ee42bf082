// Certificate material in Secrets and ConfigMaps, read with Istio's key names and error wording
// (pilot/pkg/credentials/kube), and checked the way the conversion does: PEM that parses, a key that fits.
import { createPrivateKey, X509Certificate } from "node:crypto";
import type { ConfigObject } from "../config/index.ts";

/** A Secret's values (`data` base64-decoded, then `stringData`), or a ConfigMap's `data`. */
export function objectValues(obj: ConfigObject): Record<string, string> {
  if (obj.kind === "ConfigMap") return { ...((obj.data ?? {}) as Record<string, string>) };
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries((obj.data ?? {}) as Record<string, string>)) {
    values[key] = Buffer.from(value, "base64").toString("utf8");
  }
  return { ...values, ...((obj.stringData ?? {}) as Record<string, string>) };
}

function foundKeys(data: Record<string, string>): string {
  const keys = Object.keys(data).sort();
  return keys.length < 3 ? keys.join(", ") : `${keys.slice(0, 3).join(", ")}, and ${keys.length - 3} more...`;
}

const hasValues = (data: Record<string, string>, ...keys: string[]) => keys.every((k) => (data[k] ?? "") !== "");
const hasKeys = (data: Record<string, string>, ...keys: string[]) => keys.every((k) => Object.hasOwn(data, k));

/** A server certificate and key: cert/key, else tls.crt/tls.key. */
export function extractCertInfo(data: Record<string, string>): { cert: string; key: string } | { error: string } {
  for (const [cert, key] of [
    ["cert", "key"],
    ["tls.crt", "tls.key"],
  ]) {
    if (hasValues(data, cert, key)) return { cert: data[cert], key: data[key] };
  }
  for (const [cert, key] of [
    ["cert", "key"],
    ["tls.crt", "tls.key"],
  ]) {
    if (hasKeys(data, cert, key)) return { error: `found keys "${cert}" and "${key}", but they were empty` };
  }
  return {
    error: `found secret, but didn't have expected keys (cert and key) or (tls.crt and tls.key); found: ${foundKeys(data)}`,
  };
}

/** A CA bundle: cacert, else ca.crt. */
export function extractRoot(data: Record<string, string>): { cert: string } | { error: string } {
  for (const key of ["cacert", "ca.crt"]) if (hasValues(data, key)) return { cert: data[key] };
  for (const key of ["cacert", "ca.crt"])
    if (hasKeys(data, key)) return { error: `found key "${key}", but it was empty` };
  return { error: `found secret, but didn't have expected keys cacert or ca.crt; found: ${foundKeys(data)}` };
}

/** Why a certificate and key do not form a usable pair (Go's tls.X509KeyPair wording), or undefined. */
export function keyPairProblem(cert: string, key: string): string | undefined {
  if (!cert.includes("-----BEGIN")) return "tls: failed to find any PEM data in certificate input";
  if (!key.includes("-----BEGIN")) return "tls: failed to find any PEM data in key input";
  try {
    return new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))
      ? undefined
      : "tls: private key does not match public key";
  } catch {
    return "tls: failed to parse certificate";
  }
}

/** Whether a CA bundle holds at least one certificate that parses. */
export function parsesAsCertificate(pem: string): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}
