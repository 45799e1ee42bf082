// Config generation (Istio's ConfigGenerator): a proxy's clusters, listeners, route configurations and
// load assignments, assembled from the typed push snapshot by the pure builders in networking/, with
// what proxies share kept in the XdsCache the discovery server owns and passes in.

export { KeyFormat } from "./cache/keys.ts";
export { resourceTable, XdsCache, type XdsCacheStats, type XdsCaches } from "./cache/xds-cache.ts";
export { buildClusters } from "./clusters.ts";
export { assignmentClassKey, buildLoadAssignment, loadAssignment, parseEdsClusterName } from "./endpoints.ts";
export { buildGrpcListeners, grpcClusters, grpcRouteConfiguration } from "./grpc.ts";
export { buildListeners, listenerResources } from "./listeners.ts";
export { endpointView, type ProxyClassTable, proxyClassValue } from "./proxy-view.ts";
export type { RequestedNames, XdsResource } from "./resource.ts";
export { buildRouteConfiguration, routeNames } from "./routes.ts";
