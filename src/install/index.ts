// `sluice install`'s manifests: the values, the rendered control plane, the CRDs, and their apply.
export {
  applyObjects,
  FIELD_MANAGER,
  installObjects,
  manifestText,
  objectPath,
  objectRef,
  readCrds,
} from "./manifests.ts";
export { type KubeObject, READER_SERVICE_ACCOUNT, renderControlPlane, renderRemoteReader } from "./render.ts";
export {
  DEFAULT_TAG,
  DEFAULT_VALIDATOR,
  REVISION_LABEL,
  renderTag,
  TAG_LABEL,
  type TagOptions,
} from "./tag.ts";
export {
  DEFAULT_VALUES_URL,
  loadValues,
  mergeValues,
  parseSet,
  parseValuesText,
  type ValueMap,
  Values,
} from "./values.ts";
