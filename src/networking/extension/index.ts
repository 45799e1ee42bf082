// TrafficExtensions (and the WasmPlugins translated into them) → ECDS resources and the filters using them.
export {
  EXTENSION_PHASES,
  EXTENSION_RESOURCE_PREFIX,
  type ExtensionChain,
  type ExtensionPhase,
  extensionChain,
  extensionConfig,
  extensionHttpFilter,
  extensionNetworkFilter,
  extensionNetworkFilters,
  extensionPhase,
  extensionResourceName,
  extensionsFor,
  matchesListener,
  pullSecretResource,
  WASM_SECRET_ENV,
  wasmPluginConfig,
} from "./traffic-extension.ts";
