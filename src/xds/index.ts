// Public face of the xDS layer: type URLs, the generator registry and plugins, resource encoding,
// the ADS server, the push pipeline, and the config and debug generators, and a proxy's config dump.
export {
  buildConfigDump,
  type ConfigDumpOptions,
  configDumpJson,
  DUMP_TYPES,
  type DumpSources,
  type DumpType,
} from "./configdump.ts";
export { type Discovery, type DiscoveryOptions, startDiscovery } from "./discovery.ts";
export { type EncodedResource, encodeResource } from "./encode.ts";
export { XdsError } from "./errors.ts";
export {
  type DeltaGenerateResult,
  type GenerateResult,
  type Generator,
  GeneratorRegistry,
  type LogDetails,
  loadGeneratorPlugins,
  type ResourceError,
  type WatchedResource,
  type XdsResource,
} from "./generator.ts";
export * from "./generators/index.ts";
export { type SecretLookup, storeSecrets } from "./generators/secrets.ts";
export * from "./pipeline/index.ts";
export * from "./server/index.ts";
export { type ResourceInput, SnapshotCache } from "./snapshot-cache.ts";
export { objectWhere, type TranslateResult, translateInputs } from "./translate.ts";
export { DEBUG_TYPE_PREFIX, isWildcardTypeUrl, metricType, shortType, TypeUrl } from "./types.ts";
