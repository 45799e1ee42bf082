// WasmPlugin → ECDS resources and the filters referencing them.
export {
  matchesListener,
  pluginsFor,
  pullSecretResource,
  WASM_PHASES,
  WASM_PLUGIN_RESOURCE_PREFIX,
  WASM_SECRET_ENV,
  type WasmPhase,
  type WasmPluginType,
  wasmExtensionConfig,
  wasmHttpFilter,
  wasmNetworkFilter,
  wasmNetworkFilters,
  wasmPhase,
  wasmPluginConfig,
  wasmPluginType,
  wasmResourceName,
} from "./plugin.ts";
