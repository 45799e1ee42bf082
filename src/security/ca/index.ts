// The certificate authority: Istio's CA (self-signed or plugged-in), its CreateCertificate gRPC
// service with the node authorizer of node proxies, and istiod's own serving certificate.
export {
  CaError,
  type CaErrorType,
  type CaOptions,
  CertificateAuthority,
  DEFAULT_MAX_WORKLOAD_CERT_TTL_MS,
  DEFAULT_SELF_SIGNED_CA_CERT_TTL_MS,
  DEFAULT_WORKLOAD_CERT_TTL_MS,
  type SigningBundle,
  type SignRequest,
  verifyChain,
} from "./ca.ts";
export {
  IstiodCertificate,
  type IstiodDnsNameOptions,
  type IstiodKeyCert,
  istiodDnsNames,
} from "./istiod.ts";
export { CaMetrics } from "./metrics.ts";
export { NodeAuthorizer, parseTrustedNodeAccounts, type ServiceAccountRef } from "./node-authorizer.ts";
export {
  createCsr,
  exportPrivateKey,
  generateKeyPair,
  importPrivateKey,
  type KeyAlgorithm,
  splitPemCertificates,
} from "./pki.ts";
export {
  loadPluggedCa,
  type PluggedCaFiles,
  pluggedCaFiles,
  pluggedCaState,
  reloadPluggedCa,
  watchPluggedCa,
} from "./plugged.ts";
export { type RotationResult, SelfSignedCa, type SelfSignedCaOptions } from "./selfsigned.ts";
export { type CertificateServiceOptions, certificateService } from "./service.ts";
export { type CaSettings, caSettingsFromEnv, createIstioCa, type IstioCa, type IstioCaOptions } from "./setup.ts";
export { CA_SECRET_NAME, type CaSecretData, type CaSecretStore, FileCaStore, MemoryCaStore } from "./store.ts";
// Not KubeCaSecretStore: import it from "./kube-store.ts", where it brings in the Kubernetes client.
