// The service registry: Kubernetes Services, EndpointSlices/Endpoints, Pods and Nodes, and Istio
// ServiceEntries, WorkloadEntries and WorkloadGroups, turned into services, workloads and endpoints
// as krt collections. Every transform reads other collections through ctx.fetch, so one changed
// EndpointSlice recomputes one service's endpoints, and one changed Pod the endpoints it backs.
//
//   const registry = new ServiceRegistry({ services: store.collection(kindKey("", "Service")), ... });
//   registry.services                       // Collection<Service>, one per namespace/hostname
//   registry.endpoints                      // Collection<PortEndpoints>, one per namespace/hostname/port
//   registry.endpointsFor("reviews.default.svc.cluster.local", 9080, "default")
export { kubeHostname, kubePortProtocol } from "./kube.ts";
export type * from "./model.ts";
export { hostKey, registryKey, UNSPECIFIED_IP } from "./model.ts";
export { type ClusterInputs, type RegistryInputs, type RegistryOptions, ServiceRegistry } from "./service-registry.ts";
export { autoAllocatedByHost, type WorkloadGroupTemplate } from "./serviceentry.ts";
export { podPortMap, podWorkloadName, spiffeIdentity, splitLocality, workloadEntryName } from "./workloads.ts";
