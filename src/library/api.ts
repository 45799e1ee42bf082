// `sluice/api`: the typed config model of every kind Sluice reads (Istio's and the Gateway API's, as
// istio.io/api and gateway-api give Go users), decoding of YAML and JSON with file and line, and the
// one validation path the CLI, every config source and the admission webhook share.

export type * from "../config/index.ts";
export {
  DEFAULT_MESH_CONFIG,
  type DecodedDocument,
  decodeConfigText,
  KINDS,
  type KindInfo,
  loadMeshConfig,
  lookupKind,
  objectRef,
  readConfigPaths,
  resolveKindName,
  validateObject,
} from "../config/index.ts";
export type * from "../config/mesh-types.ts";
export { type Admission, admitObject, DEFAULT_NAMESPACE, describeIssue } from "../sources/index.ts";
export type { AdmissionRequest, AdmissionResponse, ValidationFailure } from "../webhooks/index.ts";
export { type ValidationOutcome, validateAdmission } from "../webhooks/index.ts";
