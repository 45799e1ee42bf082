// The monitoring and debug HTTP server of sluiced: /metrics, /version, /ready and Istio's /debug
// endpoints (also served over xDS through the discovery's DebugEndpoints), with Istio's debug auth.
export { authorizeDebugCall, type DebugAccess, type DebugCall, isLoopback } from "./auth.ts";
export { type ControlZ, startControlZ } from "./ctrlz.ts";
export { byteCount, type DebugSources, registerDebugEndpoints } from "./debug.ts";
export { registerManagedClusters, registerMonitoringMetrics, registerRemoteSyncTimeouts } from "./monitoring.ts";
export { type AdminServer, type AdminServerOptions, parseListenAddress, startAdminServer } from "./server.ts";
