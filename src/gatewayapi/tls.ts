// Listener TLS: Terminate (certificateRefs → credentialName, client validation from the Gateway's
// frontend TLS) and Passthrough, with Istio's reference and certificate checks.
import { type ConfigObject, type gatewayapi, isValidCipherSuite } from "../config/index.ts";
import { extractCertInfo, extractRoot, keyPairProblem, objectValues, parsesAsCertificate } from "./credentials.ts";
import type { ClusterObjects, ConfigError } from "./model.ts";
import { joinErrors } from "./model.ts";
import type { ReferenceGrants } from "./referencegrant.ts";

type ListenerTls = gatewayapi.ListenersTls;
type FrontendTls = gatewayapi.GatewayTlsFrontendDefault;
type ObjectRef = { group?: string; kind?: string; name: string; namespace?: string };

export const TLS_TERMINATE_MODE_OPTION = "gateway.istio.io/tls-terminate-mode";
const CIPHER_SUITES_OPTION = "gateway.istio.io/tls-cipher-suites";

export const REASON_INVALID_CERTIFICATE_REF = "InvalidCertificateRef";
export const REASON_INVALID_CA_CERTIFICATE_REF = "InvalidCACertificateRef";
export const REASON_INVALID_CA_CERTIFICATE_KIND = "InvalidCACertificateKind";
export const REASON_REF_NOT_PERMITTED = "RefNotPermitted";

/** Istio's ServerTLSSettings in protobuf-JSON form. */
export interface ServerTls {
  /** Absent for PASSTHROUGH, the enum's zero value, which protobuf JSON omits. */
  mode?: string;
  credentialName?: string;
  credentialNames?: string[];
  caCertCredentialName?: string;
  insecureSkipVerify?: boolean;
  cipherSuites?: string[];
}

export interface TlsOwner {
  kind: "Gateway" | "ListenerSet";
  namespace: string;
}

export interface TlsResult {
  tls?: ServerTls;
  error?: ConfigError;
}

/** The frontend validation that applies to a port: its per-port entry, else the default. */
export function frontendTlsFor(port: number, tls: gatewayapi.GatewayTls | undefined): FrontendTls | undefined {
  const frontend = tls?.frontend;
  if (!frontend) return undefined;
  return frontend.perPort?.find((p) => p.port === port)?.tls ?? frontend.default;
}

export function buildServerTls(
  listenerTls: ListenerTls | undefined,
  frontend: FrontendTls | undefined,
  owner: TlsOwner,
  cluster: ClusterObjects,
  grants: ReferenceGrants,
  autoPassthrough: boolean,
): TlsResult {
  if (!listenerTls) return {};
  const mode = listenerTls.mode ?? "Terminate";
  if (mode === "Passthrough") {
    return withCiphers(autoPassthrough ? { mode: "AUTO_PASSTHROUGH" } : {}, listenerTls);
  }
  const out: ServerTls = { mode: "SIMPLE" };
  const terminateMode = listenerTls.options?.[TLS_TERMINATE_MODE_OPTION];
  if (terminateMode === "MUTUAL" || terminateMode === "OPTIONAL_MUTUAL") out.mode = terminateMode;
  if (terminateMode === "ISTIO_SIMPLE") return { tls: { mode: "SIMPLE", credentialName: "builtin://" } };
  if (terminateMode === "ISTIO_MUTUAL") return { tls: { mode: "ISTIO_MUTUAL" } };

  const refs = listenerTls.certificateRefs ?? [];
  if (refs.length > 2) {
    return {
      tls: out,
      error: {
        reason: REASON_INVALID_CERTIFICATE_REF,
        message: "TLS mode can only support up to 2 server certificates",
      },
    };
  }
  const credentials: string[] = [];
  let combined: ConfigError | undefined;
  for (const ref of refs) {
    const namespace = ref.namespace ?? owner.namespace;
    if (namespace !== owner.namespace && !grants.allowed(owner.kind, owner.namespace, "Secret", namespace, ref.name)) {
      combined = joinErrors(combined, {
        reason: REASON_REF_NOT_PERMITTED,
        message: `certificateRef ${ref.name}/${namespace} not accessible to a Gateway in namespace "${owner.namespace}" (missing a ReferenceGrant?)`,
      });
      continue;
    }
    const credential = secretCredential(ref, owner.namespace, cluster);
    if ("error" in credential) {
      combined = joinErrors(combined, credential.error);
      continue;
    }
    credentials.push(credential.name);
  }
  if (credentials.length === 0) return { tls: out, error: combined };
  if (credentials.length === 1) out.credentialName = credentials[0];
  else out.credentialNames = credentials;

  const caRefs = frontend?.validation?.caCertificateRefs ?? [];
  if (caRefs.length > 0 && frontend?.validation) {
    if (caRefs.length > 1) {
      return {
        tls: out,
        error: { reason: REASON_INVALID_CA_CERTIFICATE_REF, message: "only one caCertificateRef is supported" },
      };
    }
    const caRef = caRefs[0];
    const caNamespace = caRef.namespace ?? owner.namespace;
    const caKind = normalizedCoreKind(caRef) === "Secret" ? "Secret" : "ConfigMap";
    if (
      caNamespace !== owner.namespace &&
      !grants.allowed(owner.kind, owner.namespace, caKind, caNamespace, caRef.name)
    ) {
      return {
        tls: out,
        error: {
          reason: REASON_REF_NOT_PERMITTED,
          message: `caCertificateRef ${caNamespace}/${caRef.name} not accessible to a Gateway in namespace "${owner.namespace}" (missing a ReferenceGrant?)`,
        },
      };
    }
    const ca = caCredential(caRef, owner.namespace, cluster);
    if ("error" in ca) return { tls: out, error: ca.error };
    const insecure = frontend.validation.mode === "AllowInsecureFallback";
    out.mode = insecure ? "OPTIONAL_MUTUAL" : "MUTUAL";
    out.insecureSkipVerify = insecure;
    out.caCertCredentialName = ca.name;
    if (terminateMode === "MUTUAL" || terminateMode === "OPTIONAL_MUTUAL") {
      out.mode = terminateMode;
      out.insecureSkipVerify = false;
    }
  }
  return withCiphers(out, listenerTls);
}

/** Adds the cipher-suites option: unknown and repeated names dropped, nothing set if none remain. */
function withCiphers(tls: ServerTls, listenerTls: ListenerTls): TlsResult {
  const option = listenerTls.options?.[CIPHER_SUITES_OPTION];
  if (!option) return { tls };
  const ciphers = [...new Set(option.split(",").map((c) => c.trim()))].filter(isValidCipherSuite);
  return { tls: ciphers.length > 0 ? { ...tls, cipherSuites: ciphers } : tls };
}

function normalizedCoreKind(ref: ObjectRef): string {
  const group = ref.group ?? "";
  return group === "" || group === "core" ? (ref.kind ?? "") : `${group}/${ref.kind ?? ""}`;
}

/** Go's `%s/%s/%s.%s` rendering of a reference (group/kind/name.namespace). */
function referenceString(ref: ObjectRef): string {
  return `${ref.group ?? ""}/${ref.kind ?? ""}/${ref.name}.${ref.namespace ?? ""}`;
}

/** A certificate Secret reference → the SDS credential name, or why it is unusable. */
export function secretCredential(
  ref: ObjectRef,
  localNamespace: string,
  cluster: ClusterObjects,
  label = "certificate reference",
  reason = REASON_INVALID_CERTIFICATE_REF,
): { name: string } | { error: ConfigError } {
  if (normalizedCoreKind({ ...ref, kind: ref.kind ?? "Secret" }) !== "Secret") {
    return { error: { reason, message: `invalid ${label} ${referenceString(ref)}, only secret is allowed` } };
  }
  const namespace = ref.namespace ?? localNamespace;
  const key = `${namespace}/${ref.name}`;
  const secret = cluster.secrets.get(key);
  if (!secret)
    return { error: { reason, message: `invalid ${label} ${referenceString(ref)}, secret ${key} not found` } };
  const info = extractCertInfo(objectValues(secret));
  if ("error" in info) return { error: { reason, message: `invalid ${label} ${referenceString(ref)}, ${info.error}` } };
  const problem = keyPairProblem(info.cert, info.key);
  if (problem) {
    return {
      error: { reason, message: `invalid ${label} ${referenceString(ref)}, the certificate is malformed: ${problem}` },
    };
  }
  return { name: `kubernetes-gateway://${namespace}/${ref.name}` };
}

function caCredential(
  ref: ObjectRef,
  localNamespace: string,
  cluster: ClusterObjects,
): { name: string } | { error: ConfigError } {
  const namespace = ref.namespace ?? localNamespace;
  const key = `${namespace}/${ref.name}`;
  const kind = normalizedCoreKind(ref);
  const fail = (message: string): { error: ConfigError } => ({
    error: {
      reason: REASON_INVALID_CA_CERTIFICATE_REF,
      message: `invalid CA certificate reference ${referenceString(ref)}, ${message}`,
    },
  });
  let holder: ConfigObject | undefined;
  let scheme: string;
  if (kind === "ConfigMap") {
    holder = cluster.configMaps.get(key);
    if (!holder) return fail(`configmap ${key} not found`);
    scheme = "configmap";
  } else if (kind === "Secret") {
    holder = cluster.secrets.get(key);
    if (!holder) return fail(`secret ${key} not found`);
    scheme = "kubernetes-gateway";
  } else {
    return {
      error: {
        reason: REASON_INVALID_CA_CERTIFICATE_KIND,
        message: `invalid CA certificate reference ${referenceString(ref)}, only secret and configmap are allowed`,
      },
    };
  }
  const root = extractRoot(objectValues(holder));
  if ("error" in root) return fail(root.error);
  if (!parsesAsCertificate(root.cert)) return fail("the bundle is malformed");
  return { name: `${scheme}://${namespace}/${ref.name}-cacert` };
}
