// Generators of Sluice's own xDS types: config over xDS (`api`) and debug information
// (`istio.io/debug`, `istio.io/debug/*`), plus the debug endpoint registry they serve from.
export {
  type ApiGeneratorOptions,
  apiGenerator,
  type ConfigLister,
  mcpName,
  toMcpResource,
} from "./api.ts";
export { debugGenerator } from "./debug.ts";
export { type DebugAuthOptions, NAMESPACE_DEBUGGERS, restrictedNamespace } from "./debug-auth.ts";
export {
  DebugEndpoints,
  type DebugHandler,
  type DebugRequest,
  type DebugResponse,
  DebugText,
  debugConnection,
  NO_PROXY_ID,
  PROXY_NOT_CONNECTED,
} from "./debug-endpoints.ts";
export { type StatusGeneratorOptions, SYNCZ_TYPE_URL, statusGenerator } from "./status.ts";
