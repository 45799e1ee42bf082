// `sluice/api`: the typed config model of every kind Sluice reads (Istio's and the Gateway API's, as
// istio.io/api and gateway-api give Go users), decoding of YAML and JSON with file and line, and the
// one validation path the CLI, every config source and the admission webhook share.

export { type DecodedDocument, decodeConfigText, readConfigPaths } from "../config/decode.ts";
export type * from "../config/index.ts";
export { KINDS, type KindInfo, lookupKind, resolveKindName } from "../config/kinds.ts";
export { DEFAULT_MESH_CONFIG, loadMeshConfig } from "../config/mesh.ts";
export type * from "../config/mesh-types.ts";
export { objectRef, validateObject } from "../config/validate.ts";
export { type Admission, admitObject, DEFAULT_NAMESPACE, describeIssue } from "../sources/store-admit.ts";
export type { AdmissionRequest, AdmissionResponse } from "../webhooks/admission.ts";
export type { ValidationFailure } from "../webhooks/metrics.ts";
export { type ValidationOutcome, validateAdmission } from "../webhooks/validate.ts";
