// The ambient index's options as istiod's defaults set them (cluster Kubernetes, root and system
// namespace istio-system), for tests and benchmarks.
import type { AmbientOptions } from "../../src/ambient/index.ts";

export const AMBIENT_OPTIONS: AmbientOptions = {
  clusterId: "Kubernetes",
  domainSuffix: "cluster.local",
  systemNamespace: "istio-system",
  trustDomain: "cluster.local",
  rootNamespace: () => "istio-system",
  dryRunPolicies: false,
  allowFromWaypoint: false,
};
