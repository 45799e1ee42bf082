// Ambient mode's control plane (Istio's ambient index, pilot/pkg/serviceregistry/kube/controller/ambient):
// what ztunnel is sent over WDS (workloads, services, and the `Authorization` policies it enforces) and
// what waypoints are, computed from Pods, Services, ServiceEntries, WorkloadEntries, Namespaces, Gateways
// and security policies as krt collections.
export { AmbientIndex, type AmbientInputs, type AmbientOptions } from "./ambient-index.ts";
export type { AddressInfo, ServiceInfo, WorkloadInfo } from "./model.ts";
