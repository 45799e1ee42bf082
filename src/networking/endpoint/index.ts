// Public face of the EDS builders: one ClusterLoadAssignment per cluster, as Istio's EndpointBuilder.
//
//   const policy = effectiveTrafficPolicy(rule?.spec, 9080, "v1");          // from ../cluster/index.ts
//   buildClusterLoadAssignment({ clusterName: "outbound|9080|v1|reviews.default.svc.cluster.local",
//     port: 9080, endpoints, subsetLabels: { version: "v1" }, proxy, mesh, policy });
export { buildClusterLoadAssignment, type EndpointsInput, localityGroups } from "./cla.ts";
export {
  buildLbEndpoint,
  CONNECT_ORIGINATE,
  canonicalService,
  endpointAddress,
  envoyHealth,
  ISTIO_METADATA_KEY,
  ORIGINAL_DST_METADATA_KEY,
  TRANSPORT_SOCKET_MATCH_KEY,
} from "./lbendpoint.ts";
export { localityLbSetting, localityMatch, localityPriority } from "./locality.ts";
export { type EndpointSelection, selectEndpoints } from "./subset-filter.ts";
