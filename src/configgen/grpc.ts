// Proxyless gRPC config (Istio's pilot/pkg/networking/grpcgen): listeners, route configurations and
// clusters of only the names the client asks for, from its SidecarScope.

import type { cluster, listener, route } from "../api/index.ts";
import { TypeUrl } from "../api/index.ts";
import type { MeshConfig } from "../config/index.ts";
import type { ConsolidatedDestinationRule, MeshPush, ProxyNode, PushSnapshot, SidecarScope } from "../model/index.ts";
import { selectPolicies } from "../networking/authz/index.ts";
import { expandTrustDomains, parseClusterName } from "../networking/cluster/index.ts";
import {
  buildClientListeners,
  buildGrpcClusters,
  buildGrpcRbacFilters,
  buildGrpcRouteConfiguration,
  buildServerListener,
  grpcServerTlsContext,
  parseListenerNames,
  parseServerListenerName,
  type RequestedClusterGroup,
} from "../networking/grpc/index.ts";
import type { EndpointLookup, Service, ServiceEndpoint } from "../registry/index.ts";
import type { Memos } from "../util/index.ts";
import { resourceTable, type XdsCache } from "./cache/xds-cache.ts";
import { hashPolicyFor } from "./hash-policy.ts";
import { appliedRule } from "./proxy-view.ts";
import type { RequestedNames } from "./resource.ts";

/** Client listeners of the services the proxy sees, then the server listeners of its own ports. */
export function buildGrpcListeners(
  push: MeshPush,
  proxy: ProxyNode,
  watched: RequestedNames,
  memos: Memos,
): listener.Listener[] {
  const snap = push.snapshot;
  const request = parseListenerNames(watched.wildcard ? [] : watched.resourceNames, proxy);
  const out: listener.Listener[] = [];
  for (const service of snap.sidecarScope(proxy).services) {
    // No names at all: every service, each under its FQDN.
    const requested = watched.wildcard
      ? { requestedHosts: new Set([service.hostname]) }
      : request.outbound.get(service.hostname);
    if (requested) out.push(...buildClientListeners(memos, service, requested));
  }
  if (request.inbound.length === 0) return out;
  // A server listener only for a port one of the proxy's services targets (Istio's ServiceTargets by endpoint port).
  const targetPorts = new Set(
    snap.serviceTargets(proxy).map(({ port }) => (typeof port.targetPort === "number" ? port.targetPort : port.port)),
  );
  // AuthorizationPolicies apply to every server port of the workload alike.
  const workload = { namespace: proxy.configNamespace, labels: proxy.labels };
  const policies = selectPolicies(snap.authorizationPoliciesFor(proxy), workload, snap.rootNamespace);
  const rbac = buildGrpcRbacFilters(policies, snap.mesh.trustDomain);
  for (const name of request.inbound) {
    const parsed = parseServerListenerName(name);
    if (!parsed || !targetPorts.has(parsed.port)) continue;
    // The port's PeerAuthentication mode decides mTLS (the listener port is the workload port).
    const tls = grpcServerTlsContext(snap.mtlsMode(proxy, parsed.port), proxy.labels);
    const server = buildServerListener(name, { tls, httpFilters: rbac.filters });
    if (server) out.push(server);
  }
  return out;
}

// Routes and clusters shared by the proxies that read the same inputs: routes read the proxy's
// namespace, DNS domain and labels (VirtualService sourceLabels) and its Sidecar scope; clusters the
// service and the DestinationRule the proxy's namespace and labels select.

/** Everything a gRPC route configuration reads. */
interface GrpcRouteKey {
  routeName: string;
  configNamespace: string;
  namespace: string | undefined;
  dnsDomain: string;
  labels: Readonly<Record<string, string>>;
  // The scope is a function of its Sidecar and the push's services, VirtualServices, DestinationRules and mesh.
  mesh: MeshConfig;
  services: PushSnapshot["services"];
  virtualServices: PushSnapshot["virtualServices"];
  destinationRules: PushSnapshot["destinationRules"];
  sidecar: SidecarScope["sidecar"];
}

const GRPC_ROUTES = resourceTable<route.RouteConfiguration | undefined, GrpcRouteKey>({
  name: "grpc/routeConfigurations",
  typeUrl: TypeUrl.Route,
  key: {
    routeName: "value",
    configNamespace: "value",
    namespace: "value",
    dnsDomain: "value",
    labels: "value",
    mesh: "object",
    services: "object",
    virtualServices: "object",
    destinationRules: "object",
    sidecar: "object",
  },
  resources: (config) => (config ? [{ name: config.name, resource: config }] : []),
});

/** Everything the gRPC clusters of one requested group read. */
interface GrpcClustersKey {
  /** The cluster names asked for, sorted. */
  names: readonly string[];
  configNamespace: string;
  labels: Readonly<Record<string, string>>;
  mesh: MeshConfig;
  service: Service | undefined;
  rule: ConsolidatedDestinationRule | undefined;
  portEndpoints: readonly (readonly ServiceEndpoint[])[];
}

const GRPC_CLUSTERS = resourceTable<cluster.Cluster[], GrpcClustersKey>({
  name: "grpc/clusters",
  typeUrl: TypeUrl.Cluster,
  key: {
    names: "value",
    configNamespace: "value",
    labels: "value",
    mesh: "object",
    service: "object",
    rule: "object",
    portEndpoints: "objects",
  },
  resources: (clusters) => clusters.map((c) => ({ name: c.name, resource: c })),
});

export function grpcRouteConfiguration(
  cache: XdsCache,
  push: MeshPush,
  proxy: ProxyNode,
  routeName: string,
): route.RouteConfiguration | undefined {
  const snap = push.snapshot;
  const scope = snap.sidecarScope(proxy);
  const key: GrpcRouteKey = {
    routeName,
    configNamespace: proxy.configNamespace,
    namespace: proxy.metadata.NAMESPACE,
    dnsDomain: proxy.dnsDomain,
    labels: proxy.labels,
    mesh: snap.mesh,
    services: snap.services,
    virtualServices: snap.virtualServices,
    destinationRules: snap.destinationRules,
    sidecar: scope.sidecar,
  };
  return cache.resources(GRPC_ROUTES).get(push, key, () => {
    const egress = scope.egressListenerFor(parseClusterName(routeName)?.port ?? 0, "");
    return buildGrpcRouteConfiguration({
      routeName,
      proxy,
      mesh: snap.mesh,
      services: egress?.services ?? [],
      virtualServices: egress?.virtualServices ?? [],
      hashPolicy: hashPolicyFor(scope, proxy),
      memos: cache,
    });
  });
}

/**
 * The identities that may serve a service, the SANs an ISTIO_MUTUAL client checks (Istio's
 * push.ServiceAccounts): the service's own and those of its endpoints on every port.
 */
function serviceAccounts(service: Service, portEndpoints: readonly (readonly ServiceEndpoint[])[]): string[] {
  const ids = new Set(service.serviceAccounts);
  for (const eps of portEndpoints) for (const ep of eps) if (ep.identity !== "") ids.add(ep.identity);
  return [...ids].sort();
}

export function grpcClusters(
  cache: XdsCache,
  push: MeshPush,
  endpoints: EndpointLookup,
  proxy: ProxyNode,
  group: RequestedClusterGroup,
): cluster.Cluster[] {
  const snap = push.snapshot;
  const scope = snap.sidecarScope(proxy);
  const rule = scope.destinationRule("outbound", proxy.labels, group.hostname);
  const service = scope.service(group.hostname);
  const portEndpoints = (service?.ports ?? []).map((p) =>
    endpoints.endpointsFor(service?.hostname ?? "", p.port, service?.namespace ?? ""),
  );
  const key: GrpcClustersKey = {
    names: [...group.names].sort(),
    configNamespace: proxy.configNamespace,
    labels: proxy.labels,
    mesh: snap.mesh,
    service,
    rule,
    portEndpoints,
  };
  return cache.resources(GRPC_CLUSTERS).get(push, key, () =>
    buildGrpcClusters({
      group,
      service,
      destinationRule: rule && appliedRule(rule).spec,
      serviceAccounts: service ? expandTrustDomains(serviceAccounts(service, portEndpoints), snap.mesh) : [],
      memos: cache,
    }),
  );
}
