// Proxyless gRPC config (Istio's pilot/pkg/networking/grpcgen): pure builders of the listeners,
// routes and clusters a gRPC client or xDS-enabled server names. Endpoints are the sidecars' EDS.
//
//   const request = parseListenerNames(watched.resourceNames, proxy);
//   buildClientListeners(memos, service, request.outbound.get(service.hostname));
//   buildServerListener("xds.istio.io/grpc/lds/inbound/10.0.0.1:7070");
//   buildGrpcRouteConfiguration({ routeName: "outbound|7070||echo.ns.svc.cluster.local", proxy, mesh, services, virtualServices });
//   buildGrpcClusters({ group, service, destinationRule, serviceAccounts, memos });
//   buildServerListener(name, {
//     tls: grpcServerTlsContext(snap.mtlsMode(proxy, port), proxy.labels),
//     httpFilters: buildGrpcRbacFilters(selectPolicies(...)).filters,
//   });
export { buildGrpcClusters, type GrpcClusterInput, groupClusterNames, type RequestedClusterGroup } from "./cluster.ts";
export {
  buildClientListeners,
  buildServerListener,
  grpcRouteName,
  parseServerListenerName,
  type ServerChainOptions,
} from "./listener.ts";
export {
  expandShortName,
  type ListenerRequest,
  parseListenerNames,
  type RequestedListener,
  SERVER_LISTENER_PREFIX,
} from "./names.ts";
export { buildGrpcRbacFilters, GRPC_RBAC_DENY_FILTER, GRPC_RBAC_FILTER, type GrpcRbacFilters } from "./rbac.ts";
export { buildGrpcRouteConfiguration, type GrpcRouteInput } from "./route.ts";
export {
  CERTIFICATE_PROVIDER_INSTANCE,
  grpcCommonTlsContext,
  grpcServerTlsContext,
  grpcUpstreamTlsContext,
} from "./tls.ts";
