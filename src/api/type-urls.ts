// xDS type URLs as Istio names them (pkg/model/xds.go).
const ENVOY = "type.googleapis.com/envoy.";

export const TypeUrl = {
  Cluster: `${ENVOY}config.cluster.v3.Cluster`,
  Listener: `${ENVOY}config.listener.v3.Listener`,
  Route: `${ENVOY}config.route.v3.RouteConfiguration`,
  VirtualHost: `${ENVOY}config.route.v3.VirtualHost`,
  Endpoint: `${ENVOY}config.endpoint.v3.ClusterLoadAssignment`,
  Secret: `${ENVOY}extensions.transport_sockets.tls.v3.Secret`,
  ExtensionConfiguration: `${ENVOY}config.core.v3.TypedExtensionConfig`,
  NameTable: "type.googleapis.com/istio.networking.nds.v1.NameTable",
  HealthInfo: "type.googleapis.com/istio.v1.HealthInformation",
  ProxyConfig: "type.googleapis.com/istio.mesh.v1alpha1.ProxyConfig",
  Bootstrap: `${ENVOY}config.bootstrap.v3.Bootstrap`,
  Address: "type.googleapis.com/istio.workload.Address",
  Workload: "type.googleapis.com/istio.workload.Workload",
  WorkloadAuthorization: "type.googleapis.com/istio.security.Authorization",
  Debug: "istio.io/debug",
} as const;
